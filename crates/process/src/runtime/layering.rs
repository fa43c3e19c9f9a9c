//! The runtime's layering, checked: behaviours never call one another, primitives call only
//! primitives. (The methods all live on [`super::Runtime`], so the compiler cannot see the
//! layers; this test reads the sources.)

/// Every file of the runtime, with its layer.
const FILES: &[(&str, &str, &str)] = &[
    ("top", "mod.rs", include_str!("mod.rs")),
    ("top", "agenda.rs", include_str!("agenda.rs")),
    ("top", "commands.rs", include_str!("commands.rs")),
    ("top", "migration.rs", include_str!("migration.rs")),
    ("top", "ops.rs", include_str!("ops.rs")),
    ("top", "propagation.rs", include_str!("propagation.rs")),
    ("top", "task_commands.rs", include_str!("task_commands.rs")),
    ("behaviour", "boundary.rs", include_str!("behaviour/boundary.rs")),
    ("behaviour", "call_activity.rs", include_str!("behaviour/call_activity.rs")),
    ("behaviour", "compensation.rs", include_str!("behaviour/compensation.rs")),
    ("behaviour", "events.rs", include_str!("behaviour/events.rs")),
    ("behaviour", "gateways.rs", include_str!("behaviour/gateways.rs")),
    ("behaviour", "multi_instance.rs", include_str!("behaviour/multi_instance.rs")),
    ("behaviour", "sub_process.rs", include_str!("behaviour/sub_process.rs")),
    ("behaviour", "tasks.rs", include_str!("behaviour/tasks.rs")),
    ("primitives", "primitives/mod.rs", include_str!("primitives/mod.rs")),
    ("primitives", "expressions.rs", include_str!("primitives/expressions.rs")),
    ("primitives", "history.rs", include_str!("primitives/history.rs")),
    ("primitives", "listeners.rs", include_str!("primitives/listeners.rs")),
    ("primitives", "scripts.rs", include_str!("primitives/scripts.rs")),
    ("primitives", "tokens.rs", include_str!("primitives/tokens.rs")),
    ("primitives", "tree.rs", include_str!("primitives/tree.rs")),
    ("primitives", "variables.rs", include_str!("primitives/variables.rs")),
    ("primitives", "waits.rs", include_str!("primitives/waits.rs")),
];

/// The identifiers that follow `prefix` in `text`.
fn idents_after<'t>(text: &'t str, prefix: &'t str) -> impl Iterator<Item = (&'t str, &'t str)> + 't {
    text.match_indices(prefix).filter_map(move |(i, _)| {
        let rest = &text[i + prefix.len()..];
        let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
        (end > 0).then(|| (&rest[..end], &rest[end..]))
    })
}

#[test]
fn behaviours_call_no_other_behaviour_and_primitives_only_primitives() {
    let mut defined = std::collections::HashMap::new();
    for &(layer, file, text) in FILES {
        for (name, _) in idents_after(text, "fn ") {
            defined.insert(name, (layer, file));
        }
    }
    let mut wrong = Vec::new();
    for &(layer, file, text) in FILES {
        for (name, after) in idents_after(text, "self.") {
            let Some(&(their_layer, their_file)) = defined.get(name) else { continue };
            if !after.starts_with('(') || their_file == file {
                continue;
            }
            let allowed = match layer {
                "behaviour" => their_layer != "behaviour",
                "primitives" => their_layer == "primitives",
                _ => true,
            };
            if !allowed {
                wrong.push(format!("{file} calls {name} of {their_file}"));
            }
        }
    }
    assert!(wrong.is_empty(), "layering broken:\n{}", wrong.join("\n"));
}

#[test]
fn no_file_of_the_runtime_is_over_400_lines() {
    let long: Vec<String> = FILES
        .iter()
        .filter(|(_, _, text)| text.lines().count() > 400)
        .map(|(_, file, text)| format!("{file}: {} lines", text.lines().count()))
        .collect();
    assert!(long.is_empty(), "split these: {long:?}");
}
