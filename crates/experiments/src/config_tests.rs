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
    assert_eq!(err.location, Some((5, 1)));
}
