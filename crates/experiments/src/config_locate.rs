//! Where a key is written in a config: located from toml's own spans (keys inside arrays of
//! tables included), for [`super::ConfigError`]'s line and column and the dotted key it names.

use toml::de::{DeString, DeTable, DeValue};
use toml::Spanned;

/// 1-based line and column of a byte offset.
pub(super) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// One step of a dotted key: a table key, or an index into an array (`claims[1]`).
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// `analysis.claims[1].margin` as its steps.
fn steps(dotted: &str) -> Vec<Step<'_>> {
    let mut out = vec![];
    for part in dotted.split('.') {
        let mut pieces = part.split('[');
        if let Some(key) = pieces.next().filter(|k| !k.is_empty()) {
            out.push(Step::Key(key));
        }
        for index in pieces {
            match index.trim_end_matches(']').parse() {
                Ok(i) => out.push(Step::Index(i)),
                Err(_) => return out,
            }
        }
    }
    out
}

/// The value under `key` in a table of a spanned document.
fn entry<'t, 'i>(
    table: &'t DeTable<'i>,
    key: &str,
) -> Option<(&'t Spanned<DeString<'i>>, &'t Spanned<DeValue<'i>>)> {
    table.iter().find(|(k, _)| k.get_ref() == key)
}

/// Where the dotted key (`table.key`, `analysis.claims[1].margin`) is written (line, column),
/// read from toml's own spans; where it is not written, the deepest part of it that is (a
/// missing key is reported at its table). `None` for a document that does not parse.
pub(super) fn locate_key(text: &str, dotted: &str) -> Option<(usize, usize)> {
    let document = DeTable::parse(text).ok()?;
    let mut value: Option<&Spanned<DeValue>> = None;
    let mut found = None;
    for step in steps(dotted) {
        let next = match (step, value) {
            (Step::Key(key), None) => entry(document.get_ref(), key).map(|(k, v)| (k.span(), v)),
            (Step::Key(key), Some(v)) => v
                .get_ref()
                .as_table()
                .and_then(|t| entry(t, key))
                .map(|(k, v)| (k.span(), v)),
            (Step::Index(i), Some(v)) => v
                .get_ref()
                .as_array()
                .and_then(|a| a.get(i))
                .map(|el| (el.span(), el)),
            (Step::Index(_), None) => None,
        };
        let Some((span, v)) = next else {
            break;
        };
        found = Some(span.start);
        value = Some(v);
    }
    found.map(|offset| line_column(text, offset))
}

/// The dotted key whose key or value holds `offset` (`analysis.claims[1].margin`), the
/// deepest one, read from toml's own spans; `None` where no key does.
pub(super) fn key_at(text: &str, offset: usize) -> Option<String> {
    match DeTable::parse(text) {
        Ok(document) => path_in_table(document.get_ref(), offset),
        // A document toml cannot parse (a duplicated key) has no spans to follow: the key is
        // read from the line itself and the table header above it.
        Err(_) => key_on_line(text, offset),
    }
}

/// The dotted key written on the line holding `offset`: `key = ...` under the last `[table]` or
/// `[[array]]` header above it (`claims[1].margin`, counting the array's headers), or the
/// header itself.
fn key_on_line(text: &str, offset: usize) -> Option<String> {
    let start = text.get(..offset)?.rfind('\n').map_or(0, |i| i + 1);
    let line = text[start..].lines().next().unwrap_or("").trim();
    let unquote = |k: &str| k.trim().trim_matches('"').to_string();
    let header = |line: &str| -> Option<(String, bool)> {
        let array = line.starts_with("[[");
        let name = line.trim_start_matches('[').split(']').next()?;
        Some((unquote(name), array))
    };
    if line.starts_with('[') {
        return header(line).map(|(name, _)| name);
    }
    let key = unquote(line.split('=').next()?);
    let above = &text[..start];
    let Some((table, array)) = above
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('['))
        .and_then(header)
    else {
        return Some(key);
    };
    let table = if array {
        // The array's headers above, read as the one above was (a comment after one included).
        let index = above
            .lines()
            .filter(|l| {
                let l = l.trim();
                l.starts_with("[[") && header(l).is_some_and(|(name, _)| name == table)
            })
            .count()
            .saturating_sub(1);
        format!("{table}[{index}]")
    } else {
        table
    };
    Some(format!("{table}.{key}"))
}

fn path_in_table(table: &DeTable, offset: usize) -> Option<String> {
    table.iter().find_map(|(k, v)| {
        let inner = path_in_value(v.get_ref(), offset);
        let here = k.span().contains(&offset) || v.span().contains(&offset);
        match inner {
            Some(rest) if rest.starts_with('[') => Some(format!("{}{rest}", k.get_ref())),
            Some(rest) => Some(format!("{}.{rest}", k.get_ref())),
            None if here => Some(k.get_ref().to_string()),
            None => None,
        }
    })
}

fn path_in_value(value: &DeValue, offset: usize) -> Option<String> {
    match value {
        DeValue::Table(t) => path_in_table(t, offset),
        DeValue::Array(a) => {
            a.iter()
                .enumerate()
                .find_map(|(i, el)| match path_in_value(el.get_ref(), offset) {
                    Some(rest) => Some(format!("[{i}].{rest}")),
                    None if el.span().contains(&offset) => Some(format!("[{i}]")),
                    None => None,
                })
        }
        _ => None,
    }
}
