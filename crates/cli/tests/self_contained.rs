//! The project cites nothing outside itself (docs/ARCHITECTURE.md): no tracked text file names
//! a document that lives beside the repository rather than in it (the design notes it was
//! written from, the seeds' local file names, a cargo cache path). The seeds are cited as the
//! articles they are (docs/experiments.md, "Sources"), the studies as docs/experiments.md's.

mod common;

use std::fs;

/// Names of files outside the repository, spelled in pieces so that this file does not match.
fn outside() -> Vec<String> {
    let md = ".md";
    let mut names: Vec<String> = [
        "EXPERIMENTS",
        "BURN-NOTES",
        "FAST-PATHS",
        "ENVIRONMENT",
        "DESIGN",
        "STYLE",
    ]
    .iter()
    .map(|n| format!("{n}{md}"))
    .collect();
    names.push(format!("{}/{}", "../shared", ""));
    names.push(format!("{}/{}", "~/.cargo", "registry"));
    names
}

/// A seed's local file name: three digits, an underscore, 16 hex digits, `.txt`.
fn names_a_seed_file(text: &str) -> bool {
    text.match_indices(".txt").any(|(i, _)| {
        i >= 20 && {
            let stem = &text.as_bytes()[i - 20..i];
            stem[..3].iter().all(u8::is_ascii_digit)
                && stem[3] == b'_'
                && stem[4..].iter().all(u8::is_ascii_hexdigit)
        }
    })
}

#[test]
fn no_tracked_file_names_a_file_outside_the_repository() {
    let (root, names) = common::tracked_files();
    let outside = outside();
    let mut found = vec![];
    for name in names {
        // Binary files, and the records of where a library was loaded from on a machine.
        if [".parquet", ".png", ".ttf", ".svg"]
            .iter()
            .any(|e| name.ends_with(e))
        {
            continue;
        }
        let Ok(text) = fs::read_to_string(root.join(&name)) else {
            continue;
        };
        for o in &outside {
            if text.contains(o.as_str()) {
                found.push(format!("{name}: {o}"));
            }
        }
        if names_a_seed_file(&text) {
            found.push(format!("{name}: a seed's local file name"));
        }
    }
    assert!(
        found.is_empty(),
        "tracked files name files outside the repository:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_seed_file_pattern_matches_what_it_should() {
    assert!(names_a_seed_file(&format!(
        "seed 000 ({}_{}.txt)",
        "000", "4adc753383ace953"
    )));
    assert!(!names_a_seed_file("results.txt and seed 000"));
}
