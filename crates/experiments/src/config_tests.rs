use super::*;

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct Doc {
    experiment: ExperimentHeader,
    #[serde(default)]
    model: ModelSpec,
}

fn source(text: &str) -> Source {
    Source {
        origin: "experiments/t.toml".into(),
        text: text.into(),
        overrides: vec![],
    }
}

const GOOD: &str = "[experiment]\nname = \"t\"\nkind = \"step-time\"\n\n[model]\narchitecture = \"mlp\"\ninput = [1, 28, 28]\n";

#[test]
fn unknown_key_names_file_line_column_and_key() {
    let text = GOOD.replace("input =", "inptu =");
    let err = source(&text).parse::<Doc>().unwrap_err();
    assert_eq!(err.location, Some((7, 1)));
    assert_eq!(err.key.as_deref(), Some("model.inptu"));
    let shown = err.to_string();
    assert!(
        shown.starts_with("experiments/t.toml:7:1: key `model.inptu`"),
        "{shown}"
    );
    assert!(shown.contains("expected one of"), "{shown}");
}

#[test]
fn wrong_type_says_what_was_expected() {
    let text = GOOD.replace("input = [1, 28, 28]", "input = \"big\"");
    let err = source(&text).parse::<Doc>().unwrap_err();
    assert_eq!(err.location.map(|l| l.0), Some(7));
    assert!(err.message.contains("expected"), "{}", err.message);
}

#[test]
fn overrides_replace_values_and_are_validated_the_same_way() {
    let src = source(GOOD)
        .with_overrides(&["model.architecture=vgg19".into(), "model.classes=10".into()]);
    let doc: Doc = src.parse().unwrap();
    assert_eq!(doc.model.architecture.name(), "vgg19");
    assert_eq!(doc.model.classes, 10);
    assert_eq!(doc.model.input, [1, 28, 28]);

    let bad = source(GOOD).with_overrides(&["model.clases=10".into()]);
    let err = bad.parse::<Doc>().unwrap_err();
    assert!(err.origin.contains("--set model.clases=10"), "{err}");
    assert!(err.message.contains("clases"), "{err}");

    let malformed = source(GOOD).with_overrides(&["model.classes".into()]);
    assert!(malformed
        .parse::<Doc>()
        .unwrap_err()
        .message
        .contains("key=value"));
}

#[test]
fn resolve_errors_point_at_the_key() {
    let src = source(GOOD);
    let doc: Doc = src.parse().unwrap();
    assert_eq!(doc.model.classes, 1000, "default filled in");
    let err = src.error("model.input", "too small");
    assert_eq!(err.location, Some((7, 1)));
    // An unknown architecture is refused while reading, at its line.
    let unknown = source(&GOOD.replace("\"mlp\"", "\"vgg17\""));
    let err = unknown.parse::<Doc>().unwrap_err();
    assert_eq!(err.location.map(|(line, _)| line), Some(6));
    assert!(err.message.contains("vgg16"), "lists valid names: {err}");
    let mut model = doc.model.clone();
    model.classes = 0;
    let err = check_model(&model, &src).unwrap_err();
    // `classes` is not written: the error points at its table's name in `[model]`.
    assert_eq!(err.location, Some((5, 2)));
}

/// A document with arrays of tables, as the training and steps-to-target configs have.
const ARRAYS: &str = "[experiment]\nname = \"t\"\nkind = \"train\"\n\n[[optimizers]]\nname = \"sgd\"\n\n[[optimizers]]\nname = \"adam\"\nsteps_matched = true\n\n[[analysis.claims]]\nclaim = \"a\"\nmargin = 2.5\n\n[[analysis.claims]]\nclaim = \"b\"\nmargin = 200\n";

#[test]
fn keys_inside_arrays_of_tables_are_located_by_their_spans() {
    let src = source(ARRAYS);
    let err = src.error("analysis.claims[1].margin", "not a margin");
    assert_eq!(err.location, Some((18, 1)), "{err}");
    let err = src.error("analysis.claims[0].margin", "not a margin");
    assert_eq!(err.location, Some((14, 1)), "{err}");
    // A key the entry lacks is reported at the deepest part that is written.
    let err = src.error("analysis.claims[1].versus", "name the second");
    assert_eq!(err.location.map(|l| l.0), Some(16), "{err}");
    assert_eq!(
        key_at(ARRAYS, ARRAYS.find("steps_matched").unwrap()).as_deref(),
        Some("optimizers[1].steps_matched")
    );
    assert_eq!(
        key_at(ARRAYS, ARRAYS.find("200").unwrap()).as_deref(),
        Some("analysis.claims[1].margin")
    );
}

#[test]
fn a_type_error_inside_an_array_of_tables_names_its_key_without_brackets() {
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Optimizer {
        name: String,
        steps_matched: Option<u32>,
    }
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Arrays {
        optimizers: Vec<Optimizer>,
    }
    let text =
        "[[optimizers]]\nname = \"sgd\"\n\n[[optimizers]]\nname = \"adam\"\nsteps_matched = true\n";
    let err = source(text).parse::<Arrays>().unwrap_err();
    assert_eq!(
        err.key.as_deref(),
        Some("optimizers[1].steps_matched"),
        "{err}"
    );
    assert_eq!(err.location, Some((6, 17)), "{err}");
}

#[test]
fn a_duplicated_key_is_named_with_its_table() {
    let text = "[experiment]\nname = \"x\"\nkind = \"step-time\"\nname = \"y\"\n";
    let at = text.rfind("name").unwrap();
    assert_eq!(key_at(text, at).as_deref(), Some("experiment.name"));
    let claims = "[analysis]\nx = 1\n[[analysis.claims]]\nid = \"a\"\n[[analysis.claims]]\nid = \"b\"\nid = \"c\"\n";
    let at = claims.rfind("id").unwrap();
    assert_eq!(key_at(claims, at).as_deref(), Some("analysis.claims[1].id"));
    // A comment after an array's header: the header still counts.
    let commented = claims.replace(
        "[[analysis.claims]]\nid = \"b\"",
        "[[analysis.claims]] # b\nid = \"b\"",
    );
    let at = commented.rfind("id").unwrap();
    assert_eq!(
        key_at(&commented, at).as_deref(),
        Some("analysis.claims[1].id")
    );
    let tables = "[experiment]\nname = \"x\"\n[experiment]\n";
    let at = tables.rfind('[').unwrap();
    assert_eq!(key_at(tables, at).as_deref(), Some("experiment"));
}
