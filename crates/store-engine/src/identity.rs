//! Users, groups and memberships (Activiti/Flowable's ACT_ID_USER, ACT_ID_GROUP,
//! ACT_ID_MEMBERSHIP). The password column holds a hash the caller made; nothing here sees a
//! password. A membership is inserted only when its user and group both exist (one conditional
//! INSERT, so a racing delete cannot leave it pointing at nothing on SQLite, where the foreign
//! keys are not enforced), and deleting a user or a group deletes its memberships with it.

use crate::process::{opt, ot, t};
use crate::{Row, Rows};
use jiff::Timestamp;
use kairos_store::{Result, Sql, SqlValue, Write};
use serde::Serialize;

/// A user as the API shows it: never the password's hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct User {
    pub id: String,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub display_name: Option<String>,
    pub email: Option<String>,
    /// The tenant the user belongs to; empty for none.
    pub tenant_id: String,
}

/// A group: `type` is free text (Flowable's `assignment`, `security-role`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Group {
    pub id: String,
    pub name: Option<String>,
    #[serde(rename = "type")]
    pub kind: Option<String>,
}

const USER_COLUMNS: &[&str] = &["ID_", "FIRST_", "LAST_", "DISPLAY_NAME_", "EMAIL_", "TENANT_ID_"];
const USER_SELECT: &str = "SELECT u.ID_, u.FIRST_, u.LAST_, u.DISPLAY_NAME_, u.EMAIL_, u.TENANT_ID_ FROM ACT_ID_USER u";

fn user_row(r: &Row<'_>) -> Result<User> {
    Ok(User {
        id: r.text("ID_")?,
        first_name: r.opt_text("FIRST_")?,
        last_name: r.opt_text("LAST_")?,
        display_name: r.opt_text("DISPLAY_NAME_")?,
        email: r.opt_text("EMAIL_")?,
        tenant_id: r.opt_text("TENANT_ID_")?.unwrap_or_default(),
    })
}

/// The statement that adds `user` with `password_hash` (none: the user cannot log in). A user
/// of the same id makes it fail as a conflict.
pub fn user_insert(user: &User, password_hash: Option<String>) -> Write {
    Write::new(
        "INSERT INTO ACT_ID_USER (ID_, REV_, FIRST_, LAST_, DISPLAY_NAME_, EMAIL_, PWD_, TENANT_ID_) \
         VALUES (?, 1, ?, ?, ?, ?, ?, ?)",
        vec![
            t(&user.id),
            ot(&user.first_name),
            ot(&user.last_name),
            ot(&user.display_name),
            ot(&user.email),
            ot(&password_hash),
            t(&user.tenant_id),
        ],
    )
}

/// The statement that stores `user`'s names, e-mail and tenant (expects the user to exist).
pub fn user_update(user: &User) -> Write {
    Write::new(
        "UPDATE ACT_ID_USER SET REV_ = REV_ + 1, FIRST_ = ?, LAST_ = ?, DISPLAY_NAME_ = ?, EMAIL_ = ?, TENANT_ID_ = ? \
         WHERE ID_ = ?",
        vec![
            ot(&user.first_name),
            ot(&user.last_name),
            ot(&user.display_name),
            ot(&user.email),
            t(&user.tenant_id),
            t(&user.id),
        ],
    )
    .expect(1)
}

/// The statement that replaces user `id`'s password hash (expects the user to exist).
pub fn user_set_password(id: &str, password_hash: Option<String>) -> Write {
    Write::new("UPDATE ACT_ID_USER SET REV_ = REV_ + 1, PWD_ = ? WHERE ID_ = ?", vec![ot(&password_hash), t(id)])
        .expect(1)
}

/// The statements that delete user `id`, its memberships and its API tokens (expects the
/// user to exist).
pub fn user_delete(id: &str) -> Vec<Write> {
    vec![
        Write::new("DELETE FROM ACT_ID_MEMBERSHIP WHERE USER_ID_ = ?", vec![t(id)]),
        Write::new("DELETE FROM ACT_ID_TOKEN WHERE USER_ID_ = ?", vec![t(id)]),
        Write::new("DELETE FROM ACT_ID_USER WHERE ID_ = ?", vec![t(id)]).expect(1),
    ]
}

/// User `id`, if there is one.
pub async fn user_get(store: &dyn Sql, id: &str) -> Result<Option<User>> {
    let sql = format!("{USER_SELECT} WHERE u.ID_ = ?");
    let rows = Rows::read(store, "ACT_ID_USER", USER_COLUMNS, &sql, &[t(id)]).await?;
    rows.first().map(|r| user_row(&r)).transpose()
}

/// User `id` and the hash of its password (`None`: it has none), if there is such a user.
pub async fn user_credentials(store: &dyn Sql, id: &str) -> Result<Option<(User, Option<String>)>> {
    const COLUMNS: &[&str] = &["ID_", "FIRST_", "LAST_", "DISPLAY_NAME_", "EMAIL_", "TENANT_ID_", "PWD_"];
    let rows = Rows::read(
        store,
        "ACT_ID_USER",
        COLUMNS,
        "SELECT u.ID_, u.FIRST_, u.LAST_, u.DISPLAY_NAME_, u.EMAIL_, u.TENANT_ID_, u.PWD_ FROM ACT_ID_USER u WHERE u.ID_ = ?",
        &[t(id)],
    )
    .await?;
    rows.first().map(|r| Ok((user_row(&r)?, r.opt_text("PWD_")?))).transpose()
}

/// Every user, by id; only the members of `member_of` when given.
pub async fn user_list(store: &dyn Sql, member_of: Option<&str>) -> Result<Vec<User>> {
    let sql = format!(
        "{USER_SELECT} WHERE (CAST(? AS VARCHAR(64)) IS NULL OR EXISTS (SELECT 1 FROM ACT_ID_MEMBERSHIP m \
         WHERE m.USER_ID_ = u.ID_ AND m.GROUP_ID_ = ?)) ORDER BY u.ID_"
    );
    let g = opt(member_of);
    let rows = Rows::read(store, "ACT_ID_USER", USER_COLUMNS, &sql, &[g.clone(), g]).await?;
    rows.iter().map(|r| user_row(&r)).collect()
}

const GROUP_COLUMNS: &[&str] = &["ID_", "NAME_", "TYPE_"];
const GROUP_SELECT: &str = "SELECT g.ID_, g.NAME_, g.TYPE_ FROM ACT_ID_GROUP g";

fn group_row(r: &Row<'_>) -> Result<Group> {
    Ok(Group { id: r.text("ID_")?, name: r.opt_text("NAME_")?, kind: r.opt_text("TYPE_")? })
}

/// The statement that adds `group`; one of the same id makes it fail as a conflict.
pub fn group_insert(group: &Group) -> Write {
    Write::new(
        "INSERT INTO ACT_ID_GROUP (ID_, REV_, NAME_, TYPE_) VALUES (?, 1, ?, ?)",
        vec![t(&group.id), ot(&group.name), ot(&group.kind)],
    )
}

/// The statement that stores `group`'s name and type (expects the group to exist).
pub fn group_update(group: &Group) -> Write {
    Write::new(
        "UPDATE ACT_ID_GROUP SET REV_ = REV_ + 1, NAME_ = ?, TYPE_ = ? WHERE ID_ = ?",
        vec![ot(&group.name), ot(&group.kind), t(&group.id)],
    )
    .expect(1)
}

/// The statements that delete group `id` and its memberships (expects the group to exist).
pub fn group_delete(id: &str) -> Vec<Write> {
    vec![
        Write::new("DELETE FROM ACT_ID_MEMBERSHIP WHERE GROUP_ID_ = ?", vec![t(id)]),
        Write::new("DELETE FROM ACT_ID_GROUP WHERE ID_ = ?", vec![t(id)]).expect(1),
    ]
}

/// Group `id`, if there is one.
pub async fn group_get(store: &dyn Sql, id: &str) -> Result<Option<Group>> {
    let sql = format!("{GROUP_SELECT} WHERE g.ID_ = ?");
    let rows = Rows::read(store, "ACT_ID_GROUP", GROUP_COLUMNS, &sql, &[t(id)]).await?;
    rows.first().map(|r| group_row(&r)).transpose()
}

/// Every group, by id; only those user `member` belongs to when given.
pub async fn group_list(store: &dyn Sql, member: Option<&str>) -> Result<Vec<Group>> {
    let sql = format!(
        "{GROUP_SELECT} WHERE (CAST(? AS VARCHAR(64)) IS NULL OR EXISTS (SELECT 1 FROM ACT_ID_MEMBERSHIP m \
         WHERE m.GROUP_ID_ = g.ID_ AND m.USER_ID_ = ?)) ORDER BY g.ID_"
    );
    let u = opt(member);
    let rows = Rows::read(store, "ACT_ID_GROUP", GROUP_COLUMNS, &sql, &[u.clone(), u]).await?;
    rows.iter().map(|r| group_row(&r)).collect()
}

/// The statement that makes `user` a member of `group`: it affects one row only when both
/// exist and the user is not a member yet (a second membership fails as a conflict on the key).
pub fn membership_insert(user: &str, group: &str) -> Write {
    Write::new(
        "INSERT INTO ACT_ID_MEMBERSHIP (USER_ID_, GROUP_ID_) SELECT u.ID_, g.ID_ FROM ACT_ID_USER u, ACT_ID_GROUP g \
         WHERE u.ID_ = ? AND g.ID_ = ?",
        vec![t(user), t(group)],
    )
    .expect(1)
}

/// The statement that ends `user`'s membership of `group` (expects it to exist).
pub fn membership_delete(user: &str, group: &str) -> Write {
    Write::new("DELETE FROM ACT_ID_MEMBERSHIP WHERE USER_ID_ = ? AND GROUP_ID_ = ?", vec![t(user), t(group)]).expect(1)
}

/// Whether `user` is a member of `group`.
pub async fn is_member(store: &dyn Sql, user: &str, group: &str) -> Result<bool> {
    let rows = Rows::read(
        store,
        "ACT_ID_MEMBERSHIP",
        &["USER_ID_"],
        "SELECT USER_ID_ FROM ACT_ID_MEMBERSHIP WHERE USER_ID_ = ? AND GROUP_ID_ = ?",
        &[t(user), t(group)],
    )
    .await?;
    Ok(!rows.is_empty())
}

/// An API token as its owner sees it: never the token, nor its hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenInfo {
    pub id: String,
    pub user_id: String,
    pub name: Option<String>,
    pub created: Timestamp,
}

/// The statement that keeps API token `id` of `user`, by the hash of its secret. Inserted
/// only while the user exists (affects one row).
pub fn token_insert(id: &str, user: &str, hash: &str, name: &Option<String>, now: Timestamp) -> Write {
    Write::new(
        "INSERT INTO ACT_ID_TOKEN (ID_, REV_, TOKEN_VALUE_, TOKEN_DATE_, USER_ID_, TOKEN_DATA_) \
         SELECT ?, 1, ?, ?, u.ID_, ? FROM ACT_ID_USER u WHERE u.ID_ = ?",
        vec![t(id), t(hash), SqlValue::Timestamp(now), ot(name), t(user)],
    )
    .expect(1)
}

/// The user whose API token hashes to `hash`, with the token's id.
pub async fn token_user(store: &dyn Sql, hash: &str) -> Result<Option<(String, User)>> {
    const COLUMNS: &[&str] = &["TOKEN_ID_", "ID_", "FIRST_", "LAST_", "DISPLAY_NAME_", "EMAIL_", "TENANT_ID_"];
    let rows = Rows::read(
        store,
        "ACT_ID_TOKEN",
        COLUMNS,
        "SELECT k.ID_ AS TOKEN_ID_, u.ID_, u.FIRST_, u.LAST_, u.DISPLAY_NAME_, u.EMAIL_, u.TENANT_ID_ \
         FROM ACT_ID_TOKEN k JOIN ACT_ID_USER u ON u.ID_ = k.USER_ID_ WHERE k.TOKEN_VALUE_ = ? AND k.KIND_ = 'api'",
        &[t(hash)],
    )
    .await?;
    rows.first().map(|r| Ok((r.text("TOKEN_ID_")?, user_row(&r)?))).transpose()
}

/// User `user`'s API tokens, oldest first.
pub async fn token_list(store: &dyn Sql, user: &str) -> Result<Vec<TokenInfo>> {
    let rows = Rows::read(
        store,
        "ACT_ID_TOKEN",
        &["ID_", "USER_ID_", "TOKEN_DATA_", "TOKEN_DATE_"],
        "SELECT ID_, USER_ID_, TOKEN_DATA_, TOKEN_DATE_ FROM ACT_ID_TOKEN WHERE USER_ID_ = ? AND KIND_ = 'api' \
         ORDER BY TOKEN_DATE_, ID_",
        &[t(user)],
    )
    .await?;
    rows.iter()
        .map(|r| {
            Ok(TokenInfo {
                id: r.text("ID_")?,
                user_id: r.text("USER_ID_")?,
                name: r.opt_text("TOKEN_DATA_")?,
                created: r.instant("TOKEN_DATE_")?,
            })
        })
        .collect()
}

/// The statement that revokes API token `id` of `user` (expects it to exist).
pub fn token_delete(user: &str, id: &str) -> Write {
    Write::new("DELETE FROM ACT_ID_TOKEN WHERE ID_ = ? AND USER_ID_ = ? AND KIND_ = 'api'", vec![t(id), t(user)])
        .expect(1)
}

/// Where a console session was made from (ACT_ID_TOKEN's IP_ADDRESS_, USER_AGENT_).
#[derive(Debug, Clone, Default)]
pub struct SessionOrigin {
    pub ip_address: Option<String>,
    pub user_agent: Option<String>,
}

/// The statements that open console session `id` of `user` until `expires`, by the hash of its
/// secret, and delete the user's sessions that have ended. Inserted only while the user exists.
pub fn session_insert(
    id: &str,
    user: &str,
    hash: &str,
    now: Timestamp,
    expires: Timestamp,
    origin: &SessionOrigin,
) -> Vec<Write> {
    vec![
        Write::new(
            "DELETE FROM ACT_ID_TOKEN WHERE USER_ID_ = ? AND KIND_ = 'session' AND EXPIRES_ <= ?",
            vec![t(user), SqlValue::Timestamp(now)],
        ),
        Write::new(
            "INSERT INTO ACT_ID_TOKEN (ID_, REV_, TOKEN_VALUE_, TOKEN_DATE_, IP_ADDRESS_, USER_AGENT_, USER_ID_, KIND_, EXPIRES_) \
             SELECT ?, 1, ?, ?, ?, ?, u.ID_, 'session', ? FROM ACT_ID_USER u WHERE u.ID_ = ?",
            vec![
                t(id),
                t(hash),
                SqlValue::Timestamp(now),
                ot(&origin.ip_address),
                ot(&origin.user_agent),
                SqlValue::Timestamp(expires),
                t(user),
            ],
        )
        .expect(1),
    ]
}

/// The user whose console session hashes to `hash`, while it has not ended at `now`.
pub async fn session_user(store: &dyn Sql, hash: &str, now: Timestamp) -> Result<Option<User>> {
    let sql = format!(
        "{USER_SELECT} JOIN ACT_ID_TOKEN k ON k.USER_ID_ = u.ID_ \
         WHERE k.TOKEN_VALUE_ = ? AND k.KIND_ = 'session' AND k.EXPIRES_ > ?"
    );
    let rows = Rows::read(store, "ACT_ID_TOKEN", USER_COLUMNS, &sql, &[t(hash), SqlValue::Timestamp(now)]).await?;
    rows.first().map(|r| user_row(&r)).transpose()
}

/// The statement that ends the console session whose secret hashes to `hash` (if any).
pub fn session_delete(hash: &str) -> Write {
    Write::new("DELETE FROM ACT_ID_TOKEN WHERE TOKEN_VALUE_ = ? AND KIND_ = 'session'", vec![t(hash)])
}

/// The statement that ends every console session of `user`.
pub fn sessions_delete(user: &str) -> Write {
    Write::new("DELETE FROM ACT_ID_TOKEN WHERE USER_ID_ = ? AND KIND_ = 'session'", vec![t(user)])
}
