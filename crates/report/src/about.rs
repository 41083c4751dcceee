//! What every report says about its run before its own measurements: the experiment, where
//! it ran and how. The runner fills one [`About`] per render; each kind's context holds it,
//! so the header, the "What was run" table and the figure titles word it in one place.

use crate::markdown::table;

/// The run a report is about: the config's `[experiment]` table, the backend and device it
/// ran on, and its protocol in one line.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct About {
    /// Experiment name, e.g. `vgg16-step-time`.
    pub experiment: String,
    /// The config's one-paragraph description.
    pub description: String,
    /// The figure or table whose setup the run repeats, if any.
    pub reproduces: Option<String>,
    /// The source's claim in words, if any.
    pub claim: Option<String>,
    /// burn backend, e.g. `flex`.
    pub backend: String,
    /// Device name.
    pub device: String,
    /// One line on how the run measured: warm-up, rounds, budgets, order, stopping rules.
    pub protocol: String,
}

/// The top of a `report.md` beyond [`About`]: what the report is about and the result.
pub(crate) struct Header<'a> {
    /// What the report is about, after the name, e.g. "step time versus batch size".
    pub subject: &'a str,
    /// The verdicts counted ([`crate::verdict::tally`]), where the run judged claims.
    pub verdicts: Option<String>,
    /// One paragraph: the result in short.
    pub in_short: &'a str,
}

impl About {
    /// The header of `report.md`: the title, the description, the setup repeated and the
    /// claim (each where given), the verdicts counted and the result in short; ends in a
    /// blank line.
    pub(crate) fn header(&self, h: &Header) -> String {
        let mut md = format!("# {}: {}\n\n", self.experiment, h.subject);
        md.push_str(&format!("{}\n\n", self.description.trim()));
        if let Some(r) = &self.reproduces {
            // Names the setup repeated, not an outcome: the verdicts line says what held.
            md.push_str(&format!("**Repeats the setup of.** {}\n\n", r.trim()));
        }
        if let Some(c) = &self.claim {
            md.push_str(&format!("**Claim.** {}\n\n", c.trim()));
        }
        if let Some(v) = &h.verdicts {
            md.push_str(&format!("**Verdicts.** {v} (the claims table below).\n\n"));
        }
        md.push_str(&format!("**In short.** {}\n\n", h.in_short));
        md
    }

    /// The "What was run" table: the experiment, then `what` (the model, the data: what
    /// was trained), the backend and device, the protocol, then `rest` (the kind's own
    /// settings).
    pub(crate) fn run_table(&self, what: Vec<[String; 2]>, rest: Vec<[String; 2]>) -> String {
        let mut rows = vec![["experiment".to_string(), self.experiment.clone()]];
        rows.extend(what);
        rows.push([
            "backend / device".into(),
            format!("{} / {}", self.backend, self.device),
        ]);
        rows.push(["protocol".into(), self.protocol.clone()]);
        rows.extend(rest);
        table(
            &["setting", "value"],
            &rows.iter().map(|r| r.to_vec()).collect::<Vec<_>>(),
        )
    }

    /// A figure's title: the experiment, what the figure shows, and where it ran.
    pub(crate) fn figure_title(&self, what: &str) -> String {
        format!(
            "{}: {what} ({}, {})",
            self.experiment, self.backend, self.device
        )
    }
}

/// A model as every kind's report and `batchlab check` word it, with what a kind states
/// beside it (the forward work a step-time sweep times, the optimizer whose state a
/// batch-size finder counts).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelLine {
    /// The architecture's name, e.g. `vgg16`.
    pub architecture: String,
    /// Input channels, height and width.
    pub input: [usize; 3],
    /// Output classes.
    pub classes: usize,
    /// Trainable parameters.
    pub params: usize,
    /// Forward FLOPs per sample, where the kind states them.
    pub forward_flops: Option<u64>,
    /// The optimizer, where the kind states it.
    pub optimizer: Option<String>,
}

impl ModelLine {
    /// "vgg16, input 3x224x224, 1000 classes, 138.36 M trainable parameters", then the forward
    /// work ("15.470 GFLOPs per sample forward": MFLOPs below one GFLOP, where an MLP's 0.0008
    /// GFLOPs would print as 0.000) and the optimizer ("optimizer adam") where given.
    pub fn words(&self) -> String {
        let [c, h, w] = self.input;
        let mut line = format!(
            "{}, input {c}x{h}x{w}, {} classes, {:.2} M trainable parameters",
            self.architecture,
            self.classes,
            self.params as f64 / 1e6
        );
        if let Some(flops) = self.forward_flops {
            let flops = flops as f64;
            if flops >= 1e9 {
                line += &format!(", {:.3} GFLOPs per sample forward", flops / 1e9);
            } else {
                line += &format!(", {:.3} MFLOPs per sample forward", flops / 1e6);
            }
        }
        if let Some(optimizer) = &self.optimizer {
            line += &format!(", optimizer {optimizer}");
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_gives_the_source_only_where_the_config_does() {
        let mut about = About {
            experiment: "e".into(),
            description: "d".into(),
            ..About::default()
        };
        let h = Header {
            subject: "s",
            verdicts: None,
            in_short: "i.",
        };
        assert_eq!(about.header(&h), "# e: s\n\nd\n\n**In short.** i.\n\n");
        about.claim = Some("c".into());
        assert!(about.header(&h).contains("**Claim.** c\n"));
    }

    #[test]
    fn the_run_table_puts_the_shared_rows_around_the_kinds_own() {
        let about = About {
            experiment: "e".into(),
            backend: "flex".into(),
            device: "cpu".into(),
            protocol: "p".into(),
            ..About::default()
        };
        let t = about.run_table(
            vec![["model".into(), "m".into()]],
            vec![["x".into(), "y".into()]],
        );
        let firsts: Vec<&str> = t
            .lines()
            .skip(2)
            .map(|l| l.split('|').nth(1).unwrap().trim())
            .collect();
        assert_eq!(
            firsts,
            ["experiment", "model", "backend / device", "protocol", "x"]
        );
    }
}
