//! Users, groups and memberships on both backends (ACT_ID_*): a membership only between a user
//! and a group that exist, once; deleting either takes its memberships; a taken id refused.

mod common;

use kairos_store::{ErrorKind, Store};
use kairos_store_engine::identity::{self as db, Group, User};
use std::sync::Arc;

fn user(id: &str) -> User {
    User { id: id.into(), first_name: Some(format!("{id}'s name")), tenant_id: "acme".into(), ..User::default() }
}

async fn memberships_need_both_ends_and_go_with_them(store: Arc<dyn Store>) {
    let s = &*store;
    s.write_all(&[db::user_insert(&user("kermit"), Some("$argon2id$x".into())), db::user_insert(&user("gonzo"), None)])
        .await
        .unwrap();
    s.write_all(&[db::group_insert(&Group { id: "sales".into(), name: Some("Sales".into()), kind: None })])
        .await
        .unwrap();
    assert_eq!(s.write_all(&[db::user_insert(&user("kermit"), None)]).await.unwrap_err().kind, ErrorKind::Conflict);

    s.write_all(&[db::membership_insert("kermit", "sales")]).await.unwrap();
    assert_eq!(s.write_all(&[db::membership_insert("kermit", "sales")]).await.unwrap_err().kind, ErrorKind::Conflict);
    assert_eq!(s.write_all(&[db::membership_insert("nobody", "sales")]).await.unwrap_err().kind, ErrorKind::Conflict);
    assert_eq!(s.write_all(&[db::membership_insert("gonzo", "nogroup")]).await.unwrap_err().kind, ErrorKind::Conflict);
    assert!(db::is_member(s, "kermit", "sales").await.unwrap());
    assert!(!db::is_member(s, "gonzo", "sales").await.unwrap());
    let members: Vec<String> = db::user_list(s, Some("sales")).await.unwrap().into_iter().map(|u| u.id).collect();
    assert_eq!(members, ["kermit"]);
    assert_eq!(db::group_list(s, Some("kermit")).await.unwrap().len(), 1);
    assert_eq!(db::group_list(s, Some("gonzo")).await.unwrap().len(), 0);

    let (k, hash) = db::user_credentials(s, "kermit").await.unwrap().unwrap();
    assert_eq!((k.tenant_id.as_str(), hash.as_deref()), ("acme", Some("$argon2id$x")));
    assert_eq!(db::user_credentials(s, "gonzo").await.unwrap().unwrap().1, None);
    let changed = User { email: Some("k@muppets.test".into()), ..k };
    s.write_all(&[db::user_update(&changed), db::user_set_password("kermit", None)]).await.unwrap();
    assert_eq!(db::user_get(s, "kermit").await.unwrap(), Some(changed));
    assert_eq!(db::user_credentials(s, "kermit").await.unwrap().unwrap().1, None);
    assert_eq!(s.write_all(&[db::user_update(&user("nobody"))]).await.unwrap_err().kind, ErrorKind::Conflict);

    s.write_all(&db::user_delete("kermit")).await.unwrap();
    assert!(db::user_get(s, "kermit").await.unwrap().is_none());
    assert!(!db::is_member(s, "kermit", "sales").await.unwrap());
    assert_eq!(s.write_all(&db::user_delete("kermit")).await.unwrap_err().kind, ErrorKind::Conflict);
    s.write_all(&[db::membership_insert("gonzo", "sales")]).await.unwrap();
    s.write_all(&db::group_delete("sales")).await.unwrap();
    assert!(db::group_get(s, "sales").await.unwrap().is_none());
    assert!(db::group_list(s, Some("gonzo")).await.unwrap().is_empty());
    assert_eq!(s.write_all(&[db::membership_delete("gonzo", "sales")]).await.unwrap_err().kind, ErrorKind::Conflict);
}

on_both_backends!(memberships_need_both_ends_and_go_with_them);
