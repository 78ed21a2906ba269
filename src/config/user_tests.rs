//! `user.id`'s setting: its variable, its file key, `none`, and the host's own name on the
//! resource unless the attributes give one.

use std::collections::HashMap;

use super::*;
use crate::pipeline::UserId;

fn user_id(vars: &[(&str, &str)], file: Option<&str>) -> UserId {
    let map: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let file =
        file.map(|t| ConfigFile::parse(std::path::Path::new("/cfg/config.toml"), t).unwrap());
    Settings::resolve(
        &Overrides::default(),
        &|k| map.get(k).cloned(),
        file.as_ref(),
    )
    .unwrap()
    .pipeline
    .user_id
}

#[test]
fn user_id_comes_from_its_variable_then_the_file_and_none_turns_it_off() {
    assert_eq!(user_id(&[], None), UserId::Auto);
    assert_eq!(
        user_id(&[("ALBEDO_OTEL_USER_ID", " alice ")], None),
        UserId::Fixed("alice".into())
    );
    assert_eq!(
        user_id(&[("ALBEDO_OTEL_USER_ID", "None")], None),
        UserId::Off
    );
    assert_eq!(
        user_id(&[], Some("user_id = \"bob@example.com\"\n")),
        UserId::Fixed("bob@example.com".into())
    );
    assert_eq!(
        user_id(
            &[("ALBEDO_OTEL_USER_ID", "none")],
            Some("user_id = \"bob\"\n")
        ),
        UserId::Off,
        "the environment wins over the file"
    );
    assert_eq!(
        user_id(&[("ALBEDO_OTEL_USER_ID", "  ")], None),
        UserId::Auto
    );
}

#[test]
fn the_resource_names_the_host_unless_the_attributes_do() {
    let name = |attrs: &[(String, String)]| {
        crate::export::ResourceInfo::build(None, attrs)
            .resource
            .attributes
            .iter()
            .filter(|kv| kv.key == "host.name")
            .map(|kv| format!("{:?}", kv.value))
            .collect::<Vec<_>>()
    };
    let own = name(&[]);
    assert_eq!(own.len(), 1, "{own:?}");
    assert!(!own[0].contains("StringValue(\"\")"));
    let given = name(&[("host.name".into(), "box-1".into())]);
    assert_eq!(given.len(), 1);
    assert!(given[0].contains("box-1"));
}
