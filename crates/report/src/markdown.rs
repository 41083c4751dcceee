//! The pieces every `report.md` shares: its header and markdown tables.

/// The top of every `report.md`: the title, the config's description, what the run
/// reproduces and the source's claim (each where given), and the result in short.
pub(crate) struct Header<'a> {
    /// The experiment's name.
    pub experiment: &'a str,
    /// What the report is about, after the name, e.g. "step time versus batch size".
    pub subject: &'a str,
    /// The config's one-paragraph description.
    pub description: &'a str,
    /// The figure or table reproduced.
    pub reproduces: Option<&'a str>,
    /// The source's claim in words.
    pub claim: Option<&'a str>,
    /// The verdicts counted ([`crate::verdict::tally`]), where the run judged claims.
    pub verdicts: Option<String>,
    /// One paragraph: the result in short.
    pub in_short: &'a str,
}

impl Header<'_> {
    /// The header as markdown, ending in a blank line.
    pub(crate) fn markdown(&self) -> String {
        let mut md = format!("# {}: {}\n\n", self.experiment, self.subject);
        md.push_str(&format!("{}\n\n", self.description.trim()));
        if let Some(r) = self.reproduces {
            // Names the setup repeated, not an outcome: the verdicts line says what held.
            md.push_str(&format!("**Repeats the setup of.** {}\n\n", r.trim()));
        }
        if let Some(c) = self.claim {
            md.push_str(&format!("**Claim.** {}\n\n", c.trim()));
        }
        if let Some(v) = &self.verdicts {
            md.push_str(&format!("**Verdicts.** {v} (the claims table below).\n\n"));
        }
        md.push_str(&format!("**In short.** {}\n\n", self.in_short));
        md
    }
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
