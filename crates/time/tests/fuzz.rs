//! Fuzz-ish robustness test without extra dependencies: thousands of
//! deterministic pseudo-random inputs (token soup, mutated valid inputs and
//! raw unicode) go through every parser and, when accepted, through every
//! arithmetic entry point at extreme instants. Nothing may panic, every error
//! must carry a sane position, and everything accepted must round-trip.

use std::panic::{AssertUnwindSafe, catch_unwind};

use kairos_time::{Error, IsoDuration, RepeatCycle, RetryCycle, Timestamp, parse_instant};

/// xorshift64*: tiny, deterministic, good enough to shuffle tokens.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const TOKENS: &[&str] = &[
    "P",
    "T",
    "R",
    "/",
    ",",
    ".",
    "-",
    "+",
    ":",
    "Z",
    "Y",
    "M",
    "W",
    "D",
    "H",
    "S",
    "0",
    "1",
    "5",
    "9",
    "60",
    "12",
    "99999999999999",
    "18446744073709551616",
    "4294967296",
    "2026-01-01T08:00:00Z",
    "9999-12-30T22:00:00Z",
    "-009999-01-02T01:59:59Z",
    "PT5M",
    "P1D",
    "P1M",
    "R3",
    " ",
    "\t",
    "é",
    "分",
    "\0",
    "[",
    "]",
    "r",
    "p",
    "t",
    "z",
    "😀",
    "x",
    "+01:00",
    "2026-02-29",
    "T08:00",
];

const SEEDS: &[&str] = &[
    "PT48H",
    "P1D",
    "PT0.5S",
    "P1Y2M10DT2H30M",
    "R3/PT5M",
    "R/PT1H",
    "R/2026-01-01T08:00:00Z/P1D",
    "R5/2026-01-01T08:00:00Z/PT1H",
    "R3/PT10M/2026-12-31T00:00:00Z",
    "R/2026-01-01T08:00:00Z/P1D/2026-02-01T00:00:00Z",
    "R5/PT10M",
    "PT1M,PT5M,PT10M",
    "2026-01-01T09:00:00+01:00",
    "R/0001-01-01T00:00:00Z/P1M",
    "R/PT0.000000001S",
];

fn generate(rng: &mut Rng) -> String {
    match rng.below(4) {
        3 => {
            // A valid seed with random case and padding: exercises acceptance.
            let seed = rng.pick(SEEDS);
            let body: String =
                seed.chars().map(|c| if rng.below(2) == 0 { c.to_ascii_lowercase() } else { c }).collect();
            format!("{}{body}{}", rng.pick(&["", " ", "\t"]), rng.pick(&["", " ", "\n"]))
        }
        0 => (0..rng.below(12)).map(|_| rng.pick(TOKENS)).collect(),
        1 => {
            let mut chars: Vec<char> = rng.pick(SEEDS).chars().collect();
            for _ in 0..=rng.below(3) {
                let at = rng.below(chars.len() + 1);
                match rng.below(3) {
                    0 => chars.splice(at..at, rng.pick(TOKENS).chars()).for_each(drop),
                    1 if at < chars.len() => drop(chars.remove(at)),
                    _ if at < chars.len() => chars[at] = rng.pick(TOKENS).chars().next().unwrap_or('?'),
                    _ => chars.push('/'),
                }
            }
            chars.into_iter().collect()
        }
        _ => (0..rng.below(16)).map(|_| char::from_u32(rng.next() as u32 % 0x3_0000).unwrap_or('\u{FFFD}')).collect(),
    }
}

fn check_error(input: &str, e: &Error) {
    let shown = e.to_string();
    assert!(!shown.is_empty());
    let position = match e {
        Error::InvalidDuration { position, .. }
        | Error::InvalidCycle { position, .. }
        | Error::InvalidRetryCycle { position, .. }
        | Error::InvalidInstant { position, .. } => *position,
        Error::Overflow { .. } => return,
    };
    assert!(position >= 1 && position <= input.chars().count() + 1, "{input:?}: {shown}");
}

fn instants() -> [Timestamp; 5] {
    [
        Timestamp::MIN,
        Timestamp::MAX,
        Timestamp::UNIX_EPOCH,
        parse_instant("2026-01-01T08:00:00Z").unwrap(),
        parse_instant("9999-01-01T00:00:00Z").unwrap(),
    ]
}

/// Returns how many of the four parsers accepted `s`.
fn exercise(s: &str) -> usize {
    let mut accepted = 0;
    match IsoDuration::parse(s) {
        Ok(d) => {
            accepted += 1;
            assert_eq!(IsoDuration::parse(&d.to_string()).unwrap(), d);
            for t in instants() {
                let _ = d.add_to(t);
                let _ = d.to_signed_duration_at(t);
            }
        }
        Err(e) => check_error(s, &e),
    }
    match RepeatCycle::parse(s) {
        Ok(c) => {
            accepted += 1;
            assert_eq!(RepeatCycle::parse(&c.to_string()).unwrap(), c);
            for now in instants() {
                let _ = c.first_due(now);
                for fired in instants() {
                    if let Ok(Some((rest, next))) = c.next_after_fire(fired, now) {
                        assert!(next > now && next > fired, "{s}: {next}");
                        assert!(rest.repetitions < c.repetitions || c.repetitions.is_none());
                    }
                }
            }
        }
        Err(e) => check_error(s, &e),
    }
    match RetryCycle::parse(s) {
        Ok(r) => {
            accepted += 1;
            assert_eq!(RetryCycle::parse(&r.to_string()).unwrap(), r);
            for n in [0, 1, 2, 3, r.retries(), u32::MAX] {
                let _ = r.wait_before_retry(n);
            }
        }
        Err(e) => check_error(s, &e),
    }
    match parse_instant(s) {
        Ok(t) => {
            accepted += 1;
            assert_eq!(parse_instant(&t.to_string()).unwrap(), t);
        }
        Err(e) => check_error(s, &e),
    }
    accepted
}

#[test]
fn garbage_never_panics() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut accepted = 0;
    for i in 0..6000 {
        let input = generate(&mut rng);
        match catch_unwind(AssertUnwindSafe(|| exercise(&input))) {
            Ok(n) => accepted += n,
            Err(_) => panic!("input #{i} panicked: {input:?}"),
        }
    }
    // Make sure the generator also reaches the accepting paths.
    assert!(accepted > 1000, "only {accepted} inputs were accepted");
}

#[test]
fn extreme_inputs_are_rejected_not_panicking() {
    let long_digits = "9".repeat(10_000);
    let cases = [
        String::new(),
        "R99999999999/PT1S".into(),
        "PT99999999999999H".into(),
        format!("PT{long_digits}S"),
        format!("R{long_digits}/PT1S"),
        "/".repeat(10_000),
        ",".repeat(10_000),
        "P".repeat(10_000),
        "😀".repeat(1_000),
        "PT1H".repeat(1_000),
        "\u{0}\u{FFFF}\u{10FFFF}".into(),
    ];
    for input in &cases {
        assert_eq!(exercise(input), 0, "{input:?}");
    }
    // Errors copy at most a short prefix of huge inputs.
    let e = IsoDuration::parse(&"P".repeat(10_000)).unwrap_err().to_string();
    assert!(e.len() < 400, "{e}");
}
