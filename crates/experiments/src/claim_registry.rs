//! The claims registry, `claims/registry.toml` (docs/ARCHITECTURE.md, "Verdicts"): every
//! testable claim of the source articles once, with the rule that judges it, its parameters and
//! where each comes from, and the experiment that is its test of record. It is compiled into
//! the binary, so a run's `findings.json` names the registry it was judged against by hash,
//! wherever the binary runs; an experiment's claims refer to it by id.

use std::collections::{BTreeMap, BTreeSet};

use batchlab_method::findings::Finding;
use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::config::{BackendKind, ConfigError, Source};
use crate::kind::Kind;

/// The registry's text as committed.
const BUILTIN: &str = include_str!("../../../claims/registry.toml");

/// Where [`BUILTIN`] lives in the repository, for errors.
pub const REGISTRY_PATH: &str = "claims/registry.toml";

/// `claims/registry.toml`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Registry {
    /// The schema's version.
    pub version: u32,
    /// Every registered claim.
    #[serde(rename = "claim")]
    pub claims: Vec<RegisteredClaim>,
    /// SHA-256 of the text it was read from (hex).
    #[serde(skip)]
    pub sha256: String,
}

/// One `[[claim]]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegisteredClaim {
    /// Stable kebab-case id.
    pub id: String,
    /// The claim in the source's words (translated for the Chinese seeds).
    pub quote: String,
    /// The original sentence, where translated.
    #[serde(default)]
    pub original: Option<String>,
    /// Seed, file and section.
    pub source: String,
    /// The kind of study that judges it.
    pub kind: Kind,
    /// The rule that judges it.
    pub rule: String,
    /// The experiment whose committed runs judge it.
    #[serde(default)]
    pub test_of_record: Option<String>,
    /// Other experiments that are the same study elsewhere (on a GPU): their runs judge it by
    /// the same rule and stand for its verdict of record like the test of record's.
    #[serde(default)]
    pub judged_by: Vec<String>,
    /// Experiments that judge it by the same rule on other models: their findings reach
    /// docs/results.md under this claim, beside its verdict of record, never as it.
    #[serde(default)]
    pub see_also: Vec<String>,
    /// What it needs beyond a 2-core CPU machine (`gpu`, `dataset:NAME`).
    #[serde(default)]
    pub needs: Vec<String>,
    /// Why no experiment judges it yet.
    #[serde(default)]
    pub untested: Option<String>,
    /// The rule's parameters.
    #[serde(default)]
    pub params: toml::Table,
    /// Where each parameter comes from.
    #[serde(default)]
    pub provenance: toml::Table,
    /// When each parameter was fixed: the commit that gave it its present value (a test checks
    /// each against git). A parameter without one counts as fixed after every run.
    #[serde(default)]
    pub fixed: BTreeMap<String, Fixed>,
}

/// The commit that fixed a parameter's value, and its committer date.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fixed {
    /// The commit (abbreviated hash).
    pub commit: String,
    /// Its committer date, UTC, as git prints it (`2026-11-25T19:02:55Z`).
    pub date: String,
}

impl RegisteredClaim {
    /// Whether runs of `experiment` stand for this claim's verdict of record: its test of
    /// record or the same study elsewhere (`judged_by`).
    pub fn of_record_in(&self, experiment: &str) -> bool {
        self.test_of_record.as_deref() == Some(experiment)
            || self.judged_by.iter().any(|e| e == experiment)
    }

    /// Whether runs of `experiment` judge this claim at all: those of [`Self::of_record_in`]
    /// and the same rule on other models (`see_also`).
    pub fn judged_in(&self, experiment: &str) -> bool {
        self.of_record_in(experiment) || self.see_also.iter().any(|e| e == experiment)
    }

    /// The parameters fixed after `started` (a run's UTC start, as meta.json writes it), or
    /// never recorded as fixed: the ones a verdict of that run is post hoc in.
    pub fn fixed_after(&self, started: &str) -> Vec<&str> {
        self.params
            .keys()
            .filter(|p| {
                self.fixed
                    .get(p.as_str())
                    .is_none_or(|f| f.date.as_str() > started)
            })
            .map(String::as_str)
            .collect()
    }
}

/// The GPU backends a campaign run's name ends in, the longest suffix first (`-tch-cuda` also
/// ends in `-cuda`).
pub const CAMPAIGN_BACKENDS: [BackendKind; 3] =
    [BackendKind::TchCuda, BackendKind::Cuda, BackendKind::Wgpu];

/// The experiment and backend of a GPU campaign's run name, `<experiment>-<backend>`
/// (scripts/gpu-campaign.sh names its runs so, one experiment on two GPU backends): the name a
/// registry's `judged_by` or `see_also` gives for the runs of `experiments/<experiment>.toml` on
/// that backend. `None` for a name without a GPU backend's suffix.
pub fn campaign_run(name: &str) -> Option<(&str, BackendKind)> {
    CAMPAIGN_BACKENDS.into_iter().find_map(|backend| {
        let experiment = name.strip_suffix(backend.name())?.strip_suffix('-')?;
        Some((experiment, backend))
    })
}

impl Registry {
    /// The registry compiled into this binary.
    pub fn builtin() -> Result<Registry, ConfigError> {
        Registry::parse(&Source {
            origin: REGISTRY_PATH.into(),
            text: BUILTIN.into(),
            overrides: Vec::new(),
        })
    }

    /// Reads and checks a registry: ids unique and kebab-case, a known kind, a test of record
    /// or the reason there is none (not both), and a provenance for every parameter.
    pub fn parse(source: &Source) -> Result<Registry, ConfigError> {
        let mut registry: Registry = source.parse()?;
        registry.sha256 = format!("{:x}", Sha256::digest(source.text.as_bytes()));
        let mut ids = BTreeSet::new();
        for (i, c) in registry.claims.iter().enumerate() {
            let key = |k: &str| format!("claim[{i}].{k}");
            let kebab = !c.id.is_empty()
                && c.id
                    .chars()
                    .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '-');
            if !kebab {
                return Err(source.error(&key("id"), format!("{:?} is not kebab-case", c.id)));
            }
            if !ids.insert(c.id.as_str()) {
                return Err(source.error(&key("id"), format!("{:?} is registered twice", c.id)));
            }
            match (&c.test_of_record, &c.untested) {
                (Some(_), None) | (None, Some(_)) => {}
                _ => {
                    return Err(source.error(
                        &key("test_of_record"),
                        format!(
                            "{}: expected either a test of record or `untested` (why none), not both or neither",
                            c.id
                        ),
                    ))
                }
            }
            if let Some(param) = c.fixed.keys().find(|p| !c.params.contains_key(*p)) {
                return Err(source.error(
                    &key("fixed"),
                    format!("{}: {param:?} is not one of the claim's parameters", c.id),
                ));
            }
            if let Some((param, f)) = c.fixed.iter().find(|(_, f)| !is_utc_timestamp(&f.date)) {
                return Err(source.error(
                    &key("fixed"),
                    format!(
                        "{}: {param}'s date {:?} is not a UTC timestamp like 2026-11-25T19:02:55Z",
                        c.id, f.date
                    ),
                ));
            }
            if let Some(param) = c.params.keys().find(|p| !c.provenance.contains_key(*p)) {
                return Err(source.error(
                    &key("provenance"),
                    format!("{}: parameter {param:?} has no provenance", c.id),
                ));
            }
        }
        Ok(registry)
    }

    /// The claim with this id.
    pub fn get(&self, id: &str) -> Option<&RegisteredClaim> {
        self.claims.iter().find(|c| c.id == id)
    }

    /// Gives each finding of `experiment` without an id the id of the one registered claim this
    /// experiment judges ([`RegisteredClaim::judged_in`]) under the same rule, if there is exactly one (the
    /// rules a kind applies from `[analysis]` keys, such as a step-time sweep's jumps, carry no
    /// id of their own). A claim some finding already names by id is not given to another: a
    /// config's own entry for it is that claim, and an entry without an id beside it under the
    /// same rule is another claim (e.g. the same rule judged on another workload).
    pub fn assign_ids(&self, experiment: &str, findings: &mut [Finding]) {
        let named: Vec<String> = findings.iter().filter_map(|f| f.id.clone()).collect();
        for f in findings.iter_mut().filter(|f| f.id.is_none()) {
            if let Some(one) = self.the_claim_of(experiment, &f.rule) {
                if !named.contains(&one.id) {
                    f.id = Some(one.id.clone());
                }
            }
        }
    }

    /// The registered claim each rule of `kind` stands for on a run of `experiment`
    /// ([`Self::the_claim_of`]), by rule: its quote and source, which word the finding.
    pub fn claims_by_rule(
        &self,
        experiment: &str,
        kind: Kind,
    ) -> BTreeMap<String, (String, String)> {
        self.claims
            .iter()
            .filter(|c| c.kind == kind)
            .filter_map(|c| self.the_claim_of(experiment, &c.rule))
            .map(|c| (c.rule.clone(), (c.quote.clone(), c.source.clone())))
            .collect()
    }

    /// The one registered claim of `rule` that `experiment` judges, if exactly one: the claim
    /// a finding of that rule without an id of its own stands for ([`Self::assign_ids`]).
    pub fn the_claim_of(&self, experiment: &str, rule: &str) -> Option<&RegisteredClaim> {
        let mut matching = self
            .claims
            .iter()
            .filter(|c| c.judged_in(experiment) && c.rule == rule);
        match (matching.next(), matching.next()) {
            (Some(one), None) => Some(one),
            _ => None,
        }
    }
}

/// `2026-11-25T19:02:55Z`: what git's `%cI` prints in UTC, and meta.json's `started`, so the two
/// compare as text.
fn is_utc_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 20
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            10 => *c == b'T',
            13 | 16 => *c == b':',
            19 => *c == b'Z',
            _ => c.is_ascii_digit(),
        })
}

/// Where an experiment's config keeps a registered parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ConfigKey {
    /// A key of the claim's own `[[analysis.claims]]` entry (the one with its id).
    Entry(&'static str),
    /// Position `i` of the entry's `batch_sizes`.
    EntryBatch(usize),
    /// A key of `[analysis]`, with the default a config without it gets.
    Analysis(&'static str, Option<f64>),
    /// A text key of `[analysis]`, with the default a config without it gets.
    AnalysisText(&'static str, &'static str),
    /// A number key of another table (`[recommendation]`), with the default a config without
    /// it gets.
    Table(&'static str, &'static str, f64),
}

impl ConfigKey {
    /// The keys of a claim's `[[analysis.claims]]` entry, for a kind whose entries carry their
    /// batch sizes as `batch_sizes` (`from`/`batch_size` first, `to` second) and the parameters
    /// named in `keys` under the same names.
    pub fn in_entry(keys: &[&'static str], param: &str) -> Option<ConfigKey> {
        match param {
            "from" | "batch_size" => Some(ConfigKey::EntryBatch(0)),
            "to" => Some(ConfigKey::EntryBatch(1)),
            p => keys
                .iter()
                .find(|k| **k == p)
                .copied()
                .map(ConfigKey::Entry),
        }
    }
}

/// Where the config of a claim's test of record carries the registered `param` of a claim of a
/// kind judged by `rule`; `None` for a parameter no config key carries (no rule reads it). Each
/// kind says it for its own rules, and the table of kinds (`registry::config_key`) reads it:
/// this layer names no kind's keys.
pub type KeyLookup = fn(Kind, &str, &str) -> Option<ConfigKey>;

impl Registry {
    /// Reads a registry file (`batchlab report --registry FILE`).
    pub fn from_file(path: &std::path::Path) -> Result<Registry, ConfigError> {
        Registry::parse(&Source::from_file(path)?)
    }

    /// Writes this registry's parameters into `config` (a resolved config of `experiment`):
    /// into each `[[analysis.claims]]` entry whose id it registers, and into the `[analysis]`
    /// keys of the claims this experiment is the test of record for. Re-judging a run with
    /// other margins is rendering it from the config this returns.
    pub fn apply_to(&self, experiment: &str, config: &mut toml::Table, keys: KeyLookup) {
        self.write(experiment, config, keys, true);
    }

    /// Fills in what `config` (a run's config.toml) lacks and this registry has, never changing
    /// a value it holds (an empty list of positions is none): an `[[analysis.claims]]` entry for each claim of this experiment
    /// registered after the run, and the registered parameters its keys lack. So `batchlab
    /// report DIR` judges the claims registered since, by the registry's parameters, while
    /// every margin the run was judged by stays as it ran. Whether anything was added.
    pub fn fill_missing(
        &self,
        experiment: &str,
        config: &mut toml::Table,
        keys: KeyLookup,
    ) -> bool {
        self.write(experiment, config, keys, false)
    }

    /// [`Self::apply_to`] (`overwrite`) or [`Self::fill_missing`].
    fn write(
        &self,
        experiment: &str,
        config: &mut toml::Table,
        keys: KeyLookup,
        overwrite: bool,
    ) -> bool {
        let before = config.clone();
        let analysis = config
            .entry("analysis")
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        let Some(analysis) = analysis.as_table_mut() else {
            return false;
        };
        self.add_missing_entries(experiment, analysis, keys);
        // A resolved config writes `[]` for a list of positions no claim names: as absent.
        let set = |table: &mut toml::Table, key: &str, value: &toml::Value| {
            let unset = table
                .get(key)
                .is_none_or(|v| v.as_array().is_some_and(|a| a.is_empty()));
            if overwrite || unset {
                table.insert(key.into(), value.clone());
            }
        };
        // Keys of other tables, set once `analysis` is no longer borrowed.
        let mut elsewhere = vec![];
        for c in &self.claims {
            for (param, value) in &c.params {
                match keys(c.kind, &c.rule, param) {
                    Some(ConfigKey::Analysis(key, _) | ConfigKey::AnalysisText(key, _))
                        if c.judged_in(experiment) =>
                    {
                        set(analysis, key, value);
                    }
                    Some(ConfigKey::Table(table, key, _)) if c.judged_in(experiment) => {
                        elsewhere.push((table, key, value.clone()));
                    }
                    Some(key @ (ConfigKey::Entry(_) | ConfigKey::EntryBatch(_))) => {
                        let entries = analysis.get_mut("claims").and_then(|v| v.as_array_mut());
                        let entry = entries.and_then(|e| {
                            e.iter_mut()
                                .filter_map(|v| v.as_table_mut())
                                .find(|t| t.get("id").and_then(|v| v.as_str()) == Some(&c.id))
                        });
                        if let Some(entry) = entry {
                            set_entry(entry, key, value, overwrite);
                        }
                    }
                    _ => {}
                }
            }
        }
        if analysis.is_empty() && !before.contains_key("analysis") {
            config.remove("analysis");
        }
        for (table, key, value) in elsewhere {
            if let Some(t) = config
                .entry(table)
                .or_insert_with(|| toml::Value::Table(toml::Table::new()))
                .as_table_mut()
            {
                set(t, key, &value);
            }
        }
        *config != before
    }
}

impl Registry {
    /// Gives `analysis` an `[[analysis.claims]]` entry for each claim judged from its own entry
    /// (one whose kind keeps its parameters there, as `keys` says: training and steps-to-target
    /// claims) that `experiment` is the test of record for and that no entry names: a claim
    /// registered after a run still judges it when the run is rendered again (its parameters
    /// follow in [`Self::write`]).
    fn add_missing_entries(&self, experiment: &str, analysis: &mut toml::Table, keys: KeyLookup) {
        let named: Vec<String> = analysis
            .get("claims")
            .and_then(|v| v.as_array())
            .into_iter()
            .flatten()
            .filter_map(|e| e.get("id")?.as_str().map(str::to_string))
            .collect();
        let in_entry = |c: &RegisteredClaim| {
            c.params.keys().any(|p| {
                matches!(
                    keys(c.kind, &c.rule, p),
                    Some(ConfigKey::Entry(_) | ConfigKey::EntryBatch(_))
                )
            })
        };
        let missing = self.claims.iter().filter(|c| {
            in_entry(c)
                && c.untested.is_none()
                && c.test_of_record.as_deref() == Some(experiment)
                && !named.contains(&c.id)
        });
        let entries: Vec<toml::Value> = missing
            .map(|c| {
                let mut entry = toml::Table::new();
                for (key, value) in [
                    ("id", &c.id),
                    ("claim", &c.quote),
                    ("source", &c.source),
                    ("rule", &c.rule),
                ] {
                    entry.insert(key.into(), value.clone().into());
                }
                toml::Value::Table(entry)
            })
            .collect();
        if entries.is_empty() {
            return;
        }
        let claims = analysis
            .entry("claims")
            .or_insert_with(|| toml::Value::Array(vec![]));
        if let Some(claims) = claims.as_array_mut() {
            claims.extend(entries);
        }
    }
}

/// Sets one registered parameter in a claim's config entry (where it has none, unless
/// `overwrite`).
fn set_entry(entry: &mut toml::Table, key: ConfigKey, value: &toml::Value, overwrite: bool) {
    match key {
        ConfigKey::Entry(name) => {
            if overwrite || !entry.contains_key(name) {
                entry.insert(name.into(), value.clone());
            }
        }
        ConfigKey::EntryBatch(i) => {
            let sizes = entry
                .entry("batch_sizes")
                .or_insert_with(|| toml::Value::Array(vec![]));
            if let Some(sizes) = sizes.as_array_mut() {
                if sizes.len() <= i {
                    sizes.resize(i + 1, value.clone());
                } else if overwrite {
                    sizes[i] = value.clone();
                }
            }
        }
        ConfigKey::Analysis(..) | ConfigKey::AnalysisText(..) | ConfigKey::Table(..) => {}
    }
}

#[cfg(test)]
#[path = "claim_registry_tests.rs"]
mod tests;
