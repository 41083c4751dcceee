//! Markdown tables and lists every `report.md` uses (its header is [`crate::About`]'s).

/// The last line of every report's list of files: how its raw tables and figures are stored,
/// and the commands that give the other forms.
pub fn storage_note() -> String {
    let kib = batchlab_method::rows::stored::COMPACT_FROM_BYTES / 1024;
    format!("Raw tables of {kib} KiB or more are stored as Parquet once the run has finished (`name.parquet`: the same rows, typed, compressed); `batchlab csv DIR` writes every raw table as CSV into `DIR/csv/`. Figures are SVG; `batchlab report DIR --png` draws PNG copies too.\n")
}

/// A GitHub-flavoured markdown table: a header row, a separator and one line per row.
///
/// Cells are escaped so that a `|` or a newline in a value (an error message, say) cannot
/// break the table. Rows shorter than the header are padded with empty cells.
pub fn table<H: AsRef<str>, C: AsRef<str>>(headers: &[H], rows: &[Vec<C>]) -> String {
    let mut out = String::new();
    let header: Vec<String> = headers.iter().map(|h| escape(h.as_ref())).collect();
    out.push_str(&format!("| {} |\n", header.join(" | ")));
    out.push_str(&format!("|{}\n", " --- |".repeat(headers.len())));
    for row in rows {
        let mut cells: Vec<String> = row.iter().map(|c| escape(c.as_ref())).collect();
        cells.resize(headers.len().max(cells.len()), String::new());
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out
}

/// Makes a value safe inside one table cell.
pub fn escape(cell: &str) -> String {
    cell.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace("\r\n", "<br>")
        .replace(['\n', '\r'], "<br>")
}

/// "a, b and c"; "none" when empty.
pub(crate) fn and_list(items: &[String]) -> String {
    match items.split_last() {
        None => "none".into(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_header_separator_and_rows() {
        let t = table(&["a", "b"], &[vec!["1", "2"], vec!["3"]]);
        assert_eq!(t, "| a | b |\n| --- | --- |\n| 1 | 2 |\n| 3 |  |\n");
    }

    #[test]
    fn escapes_pipes_and_newlines() {
        assert_eq!(escape("a|b\nc"), "a\\|b<br>c");
    }
}
