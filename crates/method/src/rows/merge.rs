//! Merging the results files of a study's shards: the rows a shard contributes are the complete
//! rows of the trials it finished, and no others.
//!
//! A shard stopped mid-trial (a Slurm `scancel`, a time limit, a kill) leaves rows of the trial
//! it was running; another shard may then run that trial whole. Taking only the rows of trials
//! in a shard's own `trials.csv` keeps every trial's rows once, whoever finished it.

use std::collections::BTreeSet;

/// The rows of `text` (a CSV file with a header and a `trial` column) whose trial is in
/// `finished`, each exactly as written; the last row is left out if it is cut short (no final
/// newline). Returns the header line and those rows, or `None` for an empty file. A file
/// without a `trial` column keeps every complete row.
pub fn rows_of_finished_trials(
    text: &str,
    finished: &BTreeSet<String>,
) -> Result<Option<(String, String)>, csv::Error> {
    let Some(header_end) = text.find('\n').map(|i| i + 1) else {
        return Ok(None);
    };
    let header = &text[..header_end];
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .from_reader(text.as_bytes());
    let trial_column = reader.headers()?.iter().position(|h| h == "trial");
    let mut kept = String::new();
    let mut record = csv::StringRecord::new();
    // Each record's start in bytes, so a kept row is copied byte for byte.
    let mut start = header_end;
    while reader.read_record(&mut record)? {
        let end = reader.position().byte() as usize;
        let row = &text[start..end];
        let wanted = trial_column
            .is_none_or(|c| record.get(c).is_some_and(|trial| finished.contains(trial)));
        if row.ends_with('\n') && wanted {
            kept.push_str(row);
        }
        start = end;
    }
    Ok(Some((header.to_string(), kept)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finished(ids: &[&str]) -> BTreeSet<String> {
        ids.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn keeps_rows_of_finished_trials_byte_for_byte() {
        let text = "step,trial,message\n1,a,\"x, y\"\n1,b,z\n2,a,w\n";
        let (header, rows) = rows_of_finished_trials(text, &finished(&["a"]))
            .unwrap()
            .unwrap();
        assert_eq!(header, "step,trial,message\n");
        assert_eq!(rows, "1,a,\"x, y\"\n2,a,w\n");
    }

    #[test]
    fn a_row_cut_short_is_left_out_even_of_a_finished_trial() {
        let text = "trial,v\na,1\na,2";
        let (_, rows) = rows_of_finished_trials(text, &finished(&["a"]))
            .unwrap()
            .unwrap();
        assert_eq!(rows, "a,1\n");
    }

    #[test]
    fn quoted_newlines_stay_inside_their_row() {
        let text = "trial,message\nb,\"two\nlines\"\na,ok\n";
        let (_, rows) = rows_of_finished_trials(text, &finished(&["a"]))
            .unwrap()
            .unwrap();
        assert_eq!(rows, "a,ok\n");
        let (_, rows) = rows_of_finished_trials(text, &finished(&["b"]))
            .unwrap()
            .unwrap();
        assert_eq!(rows, "b,\"two\nlines\"\n");
    }

    #[test]
    fn without_a_trial_column_every_complete_row_is_kept() {
        let text = "x,y\n1,2\n3,4\n5";
        let (_, rows) = rows_of_finished_trials(text, &finished(&[]))
            .unwrap()
            .unwrap();
        assert_eq!(rows, "1,2\n3,4\n");
        assert!(rows_of_finished_trials("", &finished(&[]))
            .unwrap()
            .is_none());
    }
}
