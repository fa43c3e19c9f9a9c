//! The built-in `http` sink: POSTs an event's payload to its URL (or the configured base URL)
//! with `Idempotency-Key: <event id>` (seed 002 §15: the target keeps the key's result, so a
//! second delivery of one event is a repeat, not a second effect).
//!
//! A URL comes from data (an event, a model's service task), so the sink guards the network it
//! reaches (SSRF): only hosts on the allow-list, only http(s), redirects followed only to
//! allowed hosts, and — checked on the addresses DNS answers at connect time, so a name that
//! later resolves to 127.0.0.1 gains nothing — no loopback, private, link-local, unspecified or
//! multicast address unless `allow_private` is set (a test's local sink, an internal network).

use super::{Delivery, OutboxEvent, Sink};
use async_trait::async_trait;
use reqwest::Url;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

/// The http sink's settings.
#[derive(Debug, Clone)]
pub struct HttpSinkSettings {
    /// Where an event without a URL goes (trusted: it is the operator's setting, but its host
    /// still passes the address guard).
    pub base_url: Option<String>,
    /// Hosts an event's URL may name: exact names, or `*.example.com` for its subdomains.
    pub allow_hosts: Vec<String>,
    /// Let the guard pass loopback/private/link-local addresses.
    pub allow_private: bool,
    pub connect_timeout: Duration,
    /// The whole request's timeout.
    pub timeout: Duration,
}

impl Default for HttpSinkSettings {
    fn default() -> Self {
        HttpSinkSettings {
            base_url: None,
            allow_hosts: Vec::new(),
            allow_private: false,
            connect_timeout: Duration::from_secs(5),
            timeout: Duration::from_secs(30),
        }
    }
}

/// The http sink.
#[derive(Debug, Clone)]
pub struct HttpSink {
    client: reqwest::Client,
    settings: Arc<HttpSinkSettings>,
}

/// Whether `ip` is an address a guarded request may not reach.
pub fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_multicast()
                || v4.is_broadcast()
                || v4.octets()[0] == 0
                || (v4.octets()[0] == 100 && (v4.octets()[1] & 0xc0) == 64) // 100.64/10, carrier NAT
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_private(IpAddr::V4(v4));
            }
            let seg = v6.segments()[0];
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (seg & 0xfe00) == 0xfc00 // unique local
                || (seg & 0xffc0) == 0xfe80 // link-local
        }
    }
}

fn host_allowed(allow: &[String], host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    allow.iter().any(|a| {
        let a = a.to_ascii_lowercase();
        match a.strip_prefix("*.") {
            Some(suffix) => host.ends_with(&format!(".{suffix}")),
            None => host == a,
        }
    })
}

/// The marker of a connection the address guard refused, to tell it from a network failure.
const GUARD: &str = "refused by the outbox address guard";

/// Resolves names as the system does, then drops the answer if any address is guarded.
struct GuardedResolver {
    allow_private: bool,
}

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let allow_private = self.allow_private;
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if !allow_private && let Some(a) = addrs.iter().find(|a| is_private(a.ip())) {
                return Err(format!("{host} resolves to {}: {GUARD}", a.ip()).into());
            }
            let addrs: reqwest::dns::Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

impl HttpSink {
    pub fn new(settings: HttpSinkSettings) -> Result<HttpSink, String> {
        if let Some(base) = &settings.base_url {
            check_url_shape("baseUrl", base, settings.allow_private)?;
        }
        let settings = Arc::new(settings);
        let allow = settings.allow_hosts.clone();
        let redirects = reqwest::redirect::Policy::custom(move |attempt| {
            let ok = attempt.url().host_str().is_some_and(|h| host_allowed(&allow, h)) && attempt.previous().len() < 5;
            if ok { attempt.follow() } else { attempt.stop() }
        });
        let client = reqwest::Client::builder()
            .connect_timeout(settings.connect_timeout)
            .timeout(settings.timeout)
            .redirect(redirects)
            .dns_resolver(Arc::new(GuardedResolver { allow_private: settings.allow_private }))
            .build()
            .map_err(|e| format!("http sink: {e}"))?;
        Ok(HttpSink { client, settings })
    }

    /// POSTs `body` (JSON text) to `url` with `Idempotency-Key: key`: the delivery of an
    /// event, and the `http` job handler's request.
    pub async fn post(&self, url: &str, key: &str, body: String) -> Delivery {
        if let Err(e) = check_url_shape("url", url, self.settings.allow_private) {
            return Delivery::Permanent(e);
        }
        let sent = self
            .client
            .post(url)
            .header("Idempotency-Key", key)
            .header("Content-Type", "application/json")
            .body(body)
            .send()
            .await;
        match sent {
            Ok(resp) => classify(resp.status().as_u16()),
            Err(e) => {
                let text = error_chain(&e);
                if text.contains(GUARD) { Delivery::Permanent(text) } else { Delivery::Retry(text) }
            }
        }
    }

    /// POSTs `body` to `url` like [`HttpSink::post`] and reads the reply: its status and at
    /// most `limit` bytes of its body (a longer one is an error: a reply is data for a process,
    /// bounded like any other input). A refused or failed request is the [`Delivery`] it is.
    pub async fn call(&self, url: &str, key: &str, body: String, limit: usize) -> Result<(u16, Vec<u8>), Delivery> {
        check_url_shape("url", url, self.settings.allow_private).map_err(Delivery::Permanent)?;
        let sent = self
            .client
            .post(url)
            .header("Idempotency-Key", key)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json")
            .body(body)
            .send()
            .await;
        let mut resp = sent.map_err(|e| {
            let text = error_chain(&e);
            if text.contains(GUARD) { Delivery::Permanent(text) } else { Delivery::Retry(text) }
        })?;
        let status = resp.status().as_u16();
        let mut out = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(|e| Delivery::Retry(error_chain(&e)))? {
            if out.len() + chunk.len() > limit {
                return Err(Delivery::Permanent(format!("HTTP {status}: the reply is longer than {limit} bytes")));
            }
            out.extend_from_slice(&chunk);
        }
        Ok((status, out))
    }

    fn url_of<'a>(&'a self, event: &'a OutboxEvent) -> Option<&'a str> {
        event.target_url.as_deref().or(self.settings.base_url.as_deref())
    }
}

/// 2xx delivered; 408/425/429/5xx worth another try; any other answer (4xx, an unfollowed
/// redirect) never will be.
pub fn classify(status: u16) -> Delivery {
    match status {
        200..=299 => Delivery::Delivered,
        408 | 425 | 429 | 500..=599 => Delivery::Retry(format!("HTTP {status}")),
        _ => Delivery::Permanent(format!("HTTP {status}")),
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut src = e.source();
    while let Some(s) = src {
        text.push_str(": ");
        text.push_str(&s.to_string());
        src = s.source();
    }
    text
}

/// An http(s) URL with a host; an IP-literal host must pass the address guard here, since no
/// DNS answer is checked for it.
fn check_url_shape(field: &str, url: &str, allow_private: bool) -> Result<Url, String> {
    let u = Url::parse(url).map_err(|e| format!("{field}: not a URL ({e})"))?;
    if u.scheme() != "http" && u.scheme() != "https" {
        return Err(format!("{field}: scheme {:?} is not http or https", u.scheme()));
    }
    let Some(host) = u.host_str() else {
        return Err(format!("{field}: no host"));
    };
    let ip = host.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>().ok();
    if let Some(ip) = ip
        && !allow_private
        && is_private(ip)
    {
        return Err(format!("{field}: {ip} is a private, loopback or link-local address"));
    }
    Ok(u)
}

#[async_trait]
impl Sink for HttpSink {
    async fn deliver(&self, event: &OutboxEvent) -> Delivery {
        let Some(url) = self.url_of(event) else {
            return Delivery::Permanent("targetUrl: none, and the http sink has no base URL".into());
        };
        self.post(url, &event.event_id, event.payload_json.clone()).await
    }

    fn check_url(&self, url: Option<&str>) -> Result<(), String> {
        self.check_target(url)
    }
}

impl HttpSink {
    /// The checks of a URL from data before anything is written: http(s), host on the
    /// allow-list, not a guarded address literal (a name is checked again at connect time).
    pub fn check_target(&self, url: Option<&str>) -> Result<(), String> {
        let Some(url) = url else {
            return match self.settings.base_url {
                Some(_) => Ok(()),
                None => Err("targetUrl: required, the http sink has no base URL".into()),
            };
        };
        let u = check_url_shape("targetUrl", url, self.settings.allow_private)?;
        let host = u.host_str().unwrap_or_default();
        if !host_allowed(&self.settings.allow_hosts, host) {
            return Err(format!("targetUrl: host {host:?} is not on the http sink's allow-list"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guarded_addresses() {
        for a in [
            "127.0.0.1",
            "10.1.2.3",
            "192.168.0.1",
            "172.16.5.5",
            "169.254.169.254",
            "0.0.0.0",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "100.64.0.1",
        ] {
            assert!(is_private(a.parse().unwrap()), "{a}");
        }
        for a in ["8.8.8.8", "2001:4860:4860::8888", "172.32.0.1"] {
            assert!(!is_private(a.parse().unwrap()), "{a}");
        }
    }

    #[test]
    fn statuses() {
        assert_eq!(classify(204), Delivery::Delivered);
        for s in [408, 425, 429, 500, 503] {
            assert!(matches!(classify(s), Delivery::Retry(_)), "{s}");
        }
        for s in [400, 401, 404, 409, 422, 302] {
            assert!(matches!(classify(s), Delivery::Permanent(_)), "{s}");
        }
    }

    #[test]
    fn the_allow_list() {
        let allow = vec!["hooks.example.com".to_owned(), "*.corp.example".to_owned()];
        assert!(host_allowed(&allow, "HOOKS.example.com"));
        assert!(host_allowed(&allow, "a.corp.example"));
        assert!(!host_allowed(&allow, "corp.example"));
        assert!(!host_allowed(&allow, "evilhooks.example.com"));
    }
}
