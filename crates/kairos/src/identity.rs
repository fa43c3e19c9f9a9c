//! Users, groups and memberships (SPEC I7; Flowable's `IdentityService`), kept in Activiti's
//! ACT_ID_* tables so that the ids a team's models name (`candidateGroups="sales"`) mean the
//! same people here: a user's candidate tasks include their groups' ([`crate::process::TaskFilter`]).
//!
//! Passwords are stored as Argon2id hashes in PHC form (the RustCrypto `argon2` crate, OWASP's
//! first choice: memory-hard, so a stolen table costs an attacker memory per guess, not just
//! time), with a fresh random salt each. Hashing takes tens of milliseconds of one core on
//! purpose: it runs on tokio's blocking pool so it never stalls the workers, and
//! [`Identity::check_password`] spends the same time on an unknown user as on a wrong password,
//! so the answer's timing does not tell which ids exist.
//!
//! Every check happens before anything is written, and every change is one atomic write list:
//! a bad field is an [`Error::Invalid`] naming it, a missing user or group a `NotFound`, a taken
//! id or an existing membership a `Conflict`.

use crate::Error;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use kairos_store::{ErrorKind, Store};
use kairos_store_engine::identity as db;
pub use kairos_store_engine::identity::{Group, SessionOrigin, TokenInfo, User};
use serde::Serialize;
use std::sync::Arc;

/// Longest user or group id (ID_ VARCHAR(64)).
pub const MAX_ID_CHARS: usize = 64;
/// Longest name, e-mail, group type or tenant (VARCHAR(255)).
pub const MAX_TEXT_CHARS: usize = 255;
/// Longest password, in bytes: long passphrases fit, and no request buys an unbounded hash.
pub const MAX_PASSWORD_BYTES: usize = 1024;

/// A user to create.
#[derive(Debug, Clone, Default)]
pub struct NewUser {
    pub user: User,
    /// `None`: the user cannot log in until one is set.
    pub password: Option<String>,
}

/// What to change of a user: `None` leaves a field, `Some(None)` clears it.
#[derive(Debug, Clone, Default)]
pub struct UserChange {
    pub first_name: Option<Option<String>>,
    pub last_name: Option<Option<String>>,
    pub display_name: Option<Option<String>>,
    pub email: Option<Option<String>>,
    pub tenant_id: Option<String>,
    /// `Some(None)` removes the password: the user can no longer log in.
    pub password: Option<Option<String>>,
}

/// What to change of a group: `None` leaves a field, `Some(None)` clears it.
#[derive(Debug, Clone, Default)]
pub struct GroupChange {
    pub name: Option<Option<String>>,
    pub kind: Option<Option<String>>,
}

/// Members of this group are admins: deploy, migrate, delete, dead letters, users.
pub const ADMIN_GROUP: &str = "kairos-admin";
/// Members of this group are operators: jobs, instances, triggers.
pub const OPERATOR_GROUP: &str = "kairos-operator";

/// What a caller may do, in increasing order: a `User` works their tasklist; an `Operator`
/// runs the engine (jobs, instances, triggers, external workers); an `Admin` also deploys,
/// migrates, deletes and manages users. A user's role comes from their groups (as Camunda's
/// `camunda-admin` group): [`ADMIN_GROUP`], [`OPERATOR_GROUP`], else `User`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Operator,
    Admin,
}

impl Role {
    /// The role that membership of `groups` gives.
    pub fn of_groups(groups: &[String]) -> Role {
        if groups.iter().any(|g| g == ADMIN_GROUP) {
            Role::Admin
        } else if groups.iter().any(|g| g == OPERATOR_GROUP) {
            Role::Operator
        } else {
            Role::User
        }
    }
}

/// Who is calling, once authenticated: the node's own token (an admin with no user), or a user
/// with their groups, role and tenant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Principal {
    /// `None` for the node's token.
    pub user_id: Option<String>,
    pub groups: Vec<String>,
    pub role: Role,
    /// The user's tenant; empty for none (and for the node's token).
    pub tenant_id: String,
}

impl Principal {
    /// The user whose tasklist this caller is narrowed to: a user's own id; `None` for
    /// operators and admins, who see every task.
    pub fn tasklist_user(&self) -> Option<&str> {
        if self.role < Role::Operator { self.user_id.as_deref() } else { None }
    }

    /// The one tenant this caller sees and acts in (SPEC I7): a user's tenant. `None` — every
    /// tenant — for a user of no tenant and for the node's token: a node without tenants has
    /// nobody to keep apart.
    pub fn tenant(&self) -> Option<&str> {
        Some(self.tenant_id.as_str()).filter(|t| !t.is_empty())
    }

    /// The holder of the node's API token: an admin.
    pub fn node_token() -> Principal {
        Principal { user_id: None, groups: Vec::new(), role: Role::Admin, tenant_id: String::new() }
    }
}

/// How API tokens start, so a leaked one is recognisable (secret scanners, logs).
pub const TOKEN_PREFIX: &str = "kairos_";

/// The SHA-256 of a token, in hex: what ACT_ID_TOKEN keeps.
pub fn token_hash(token: &str) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(token.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// How console session secrets start.
pub const SESSION_PREFIX: &str = "kairos-session_";
/// How long a console session lasts from its login.
pub const SESSION_LIFETIME: std::time::Duration = std::time::Duration::from_secs(12 * 3600);

/// The CSRF token of console session `secret`: a request authenticated by the session's cookie
/// that changes anything must carry it (`X-CSRF-Token`). Derived from the secret, which a page
/// of another site can neither read (the cookie is HttpOnly) nor guess, so nothing more is kept.
pub fn csrf_token(secret: &str) -> String {
    token_hash(&format!("kairos-csrf\0{secret}"))
}

/// 256 random bits, in hex.
fn random_hex() -> String {
    rand::random::<[u8; 32]>().iter().map(|b| format!("{b:02x}")).collect()
}

/// The identity service of an engine ([`crate::Engine::identity`]).
#[derive(Debug, Clone)]
pub struct Identity {
    store: Arc<dyn Store>,
    verified: Arc<Verified>,
}

/// How long a verified password is remembered: a client sending Basic credentials on every
/// request (Flowable's and Camunda's do) pays for one Argon2 check per this period, not one
/// per request.
const VERIFIED_FOR: std::time::Duration = std::time::Duration::from_secs(300);
/// Most passwords remembered; the memory is emptied when it is full.
const VERIFIED_MAX: usize = 10_000;

/// Passwords this node verified lately, each as a SHA-256 over a per-process random key, the
/// user id, the password and the stored hash, so a changed password or a deleted user is not
/// remembered, and the memory holds nothing a dump could test guesses against without the key.
#[derive(Debug)]
struct Verified {
    key: [u8; 32],
    seen: std::sync::Mutex<std::collections::HashMap<[u8; 32], std::time::Instant>>,
}

impl Verified {
    fn new() -> Verified {
        Verified { key: rand::random(), seen: std::sync::Mutex::new(std::collections::HashMap::new()) }
    }

    fn fingerprint(&self, user: &str, password: &str, hash: &str) -> [u8; 32] {
        use sha2::Digest as _;
        let mut h = sha2::Sha256::new();
        for part in [&self.key[..], user.as_bytes(), password.as_bytes(), hash.as_bytes()] {
            h.update((part.len() as u64).to_be_bytes());
            h.update(part);
        }
        h.finalize().into()
    }

    fn knows(&self, f: &[u8; 32]) -> bool {
        let seen = self.seen.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        seen.get(f).is_some_and(|at| at.elapsed() < VERIFIED_FOR)
    }

    fn remember(&self, f: [u8; 32]) {
        let mut seen = self.seen.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if seen.len() >= VERIFIED_MAX {
            seen.clear();
        }
        seen.insert(f, std::time::Instant::now());
    }
}

fn invalid(field: &'static str, message: impl Into<String>) -> Error {
    Error::Invalid(kairos_core::Error::invalid(field, message))
}

fn store_error(kind: ErrorKind, message: String) -> Error {
    Error::Store(kairos_store::Error::new(kind, message))
}

/// A conflict of `write_all` (an expected row missing, a key taken) as `kind` with `message`.
fn on_conflict(e: kairos_store::Error, kind: ErrorKind, message: impl FnOnce() -> String) -> Error {
    if e.kind == ErrorKind::Conflict { store_error(kind, message()) } else { e.into() }
}

/// An id: 1 to 64 characters, no control characters, no `:` (HTTP Basic credentials end the
/// user id at the first colon, RFC 7617 §2, so such a user could never log in).
pub fn check_id(field: &'static str, id: &str) -> Result<(), Error> {
    let n = id.chars().count();
    if id.trim().is_empty() {
        return Err(invalid(field, format!("{field} must not be empty")));
    }
    if n > MAX_ID_CHARS {
        return Err(invalid(field, format!("{field} may have at most {MAX_ID_CHARS} characters, not {n}")));
    }
    if id.chars().any(char::is_control) {
        return Err(invalid(field, format!("{field} must not hold control characters")));
    }
    if id.contains(':') {
        return Err(invalid(
            field,
            format!("{field} must not hold ':' (HTTP Basic credentials end the user id there)"),
        ));
    }
    Ok(())
}

fn check_text(field: &'static str, v: &Option<String>) -> Result<(), Error> {
    match v {
        Some(s) if s.chars().count() > MAX_TEXT_CHARS => {
            Err(invalid(field, format!("{field} may have at most {MAX_TEXT_CHARS} characters")))
        }
        Some(s) if s.chars().any(char::is_control) => {
            Err(invalid(field, format!("{field} must not hold control characters")))
        }
        _ => Ok(()),
    }
}

fn check_password(p: &str) -> Result<(), Error> {
    if p.is_empty() {
        return Err(invalid("password", "password must not be empty (null leaves the user without one)"));
    }
    if p.len() > MAX_PASSWORD_BYTES {
        return Err(invalid("password", format!("password may have at most {MAX_PASSWORD_BYTES} bytes")));
    }
    Ok(())
}

fn check_user(u: &User) -> Result<(), Error> {
    check_id("id", &u.id)?;
    check_text("firstName", &u.first_name)?;
    check_text("lastName", &u.last_name)?;
    check_text("displayName", &u.display_name)?;
    check_text("email", &u.email)?;
    check_text("tenantId", &Some(u.tenant_id.clone()))
}

fn check_group(g: &Group) -> Result<(), Error> {
    check_id("id", &g.id)?;
    check_text("name", &g.name)?;
    check_text("type", &g.kind)
}

/// At most one Argon2 computation per core at a time: a flood of logins (or of Basic
/// credentials, right or wrong) queues here instead of taking every blocking thread and core.
async fn hashing_permit() -> tokio::sync::SemaphorePermit<'static> {
    static PERMITS: std::sync::OnceLock<tokio::sync::Semaphore> = std::sync::OnceLock::new();
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let sem = PERMITS.get_or_init(|| tokio::sync::Semaphore::new(cores));
    // The semaphore is never closed, so acquiring cannot fail.
    sem.acquire().await.expect("the hashing semaphore is never closed")
}

/// The Argon2id hash of `password` in PHC form, with a fresh random salt.
pub async fn hash_password(password: String) -> Result<String, Error> {
    let _permit = hashing_permit().await;
    tokio::task::spawn_blocking(move || {
        let salt = SaltString::encode_b64(&rand::random::<[u8; 16]>())
            .map_err(|e| Error::Config(format!("password salt: {e}")))?;
        argon2::Argon2::default()
            .hash_password(password.as_bytes(), &salt)
            .map(|h| h.to_string())
            .map_err(|e| Error::Config(format!("password hash: {e}")))
    })
    .await
    .map_err(|e| Error::Config(format!("password hash: {e}")))?
}

/// Whether `password` matches `hash` (a PHC string; a malformed one matches nothing).
pub async fn verify_password(password: String, hash: String) -> bool {
    let _permit = hashing_permit().await;
    tokio::task::spawn_blocking(move || {
        PasswordHash::new(&hash)
            .is_ok_and(|h| argon2::Argon2::default().verify_password(password.as_bytes(), &h).is_ok())
    })
    .await
    .unwrap_or(false)
}

/// A hash no password matches, made once, checked against when a user does not exist so the
/// answer takes as long as for a wrong password.
async fn decoy_hash() -> String {
    static DECOY: tokio::sync::OnceCell<String> = tokio::sync::OnceCell::const_new();
    DECOY
        .get_or_init(|| async {
            let random = format!("{:x}", rand::random::<u128>());
            hash_password(random).await.unwrap_or_default()
        })
        .await
        .clone()
}

impl Identity {
    pub(crate) fn new(store: Arc<dyn Store>) -> Identity {
        Identity { store, verified: Arc::new(Verified::new()) }
    }

    fn sql(&self) -> &dyn kairos_store::Sql {
        self.store.as_ref()
    }

    /// Creates a user; `Conflict` when the id is taken.
    pub async fn create_user(&self, new: NewUser) -> Result<User, Error> {
        check_user(&new.user)?;
        let hash = match new.password {
            Some(p) => {
                check_password(&p)?;
                Some(hash_password(p).await?)
            }
            None => None,
        };
        let id = new.user.id.clone();
        self.store
            .write_all(&[db::user_insert(&new.user, hash)])
            .await
            .map_err(|e| on_conflict(e, ErrorKind::Conflict, || format!("a user with id '{id}' already exists")))?;
        self.user(&id).await
    }

    /// User `id`; `NotFound` when there is none.
    pub async fn user(&self, id: &str) -> Result<User, Error> {
        db::user_get(self.sql(), id)
            .await?
            .ok_or_else(|| store_error(ErrorKind::NotFound, format!("there is no user '{id}'")))
    }

    /// Every user, by id; the members of `member_of` only when given.
    pub async fn users(&self, member_of: Option<&str>) -> Result<Vec<User>, Error> {
        Ok(db::user_list(self.sql(), member_of).await?)
    }

    /// Changes what `change` names of user `id`.
    pub async fn update_user(&self, id: &str, change: UserChange) -> Result<User, Error> {
        let mut user = self.user(id).await?;
        let set = |field: &mut Option<String>, v: Option<Option<String>>| {
            if let Some(v) = v {
                *field = v;
            }
        };
        set(&mut user.first_name, change.first_name);
        set(&mut user.last_name, change.last_name);
        set(&mut user.display_name, change.display_name);
        set(&mut user.email, change.email);
        if let Some(t) = change.tenant_id {
            user.tenant_id = t;
        }
        check_user(&user)?;
        let mut writes = vec![db::user_update(&user)];
        if let Some(p) = change.password {
            let hash = match p {
                Some(p) => {
                    check_password(&p)?;
                    Some(hash_password(p).await?)
                }
                None => None,
            };
            writes.push(db::user_set_password(id, hash));
            // Whoever logged in with the old password is logged out (API tokens stay: they
            // are revoked one by one, DELETE /identity/users/{id}/tokens/{tokenId}).
            writes.push(db::sessions_delete(id));
        }
        self.store
            .write_all(&writes)
            .await
            .map_err(|e| on_conflict(e, ErrorKind::NotFound, || format!("there is no user '{id}'")))?;
        self.user(id).await
    }

    /// Deletes user `id` and its memberships.
    pub async fn delete_user(&self, id: &str) -> Result<(), Error> {
        self.store
            .write_all(&db::user_delete(id))
            .await
            .map_err(|e| on_conflict(e, ErrorKind::NotFound, || format!("there is no user '{id}'")))?;
        Ok(())
    }

    /// The user `id` names when `password` is theirs; `None` for a wrong password, an unknown
    /// user or one without a password, after the same work in each case.
    pub async fn check_password(&self, id: &str, password: &str) -> Result<Option<User>, Error> {
        if password.len() > MAX_PASSWORD_BYTES || check_id("id", id).is_err() {
            return Ok(None);
        }
        let found = db::user_credentials(self.sql(), id).await?;
        if let Some((user, Some(hash))) = &found {
            let f = self.verified.fingerprint(id, password, hash);
            if self.verified.knows(&f) {
                return Ok(Some(user.clone()));
            }
            if verify_password(password.to_string(), hash.clone()).await {
                self.verified.remember(f);
                return Ok(Some(user.clone()));
            }
            return Ok(None);
        }
        verify_password(password.to_string(), decoy_hash().await).await;
        Ok(None)
    }

    /// The user `id` names when this node verified `password` as theirs within the last
    /// minutes and it is still their password: one read, no Argon2 check.
    pub async fn remembered(&self, id: &str, password: &str) -> Result<Option<User>, Error> {
        if password.len() > MAX_PASSWORD_BYTES || check_id("id", id).is_err() {
            return Ok(None);
        }
        Ok(match db::user_credentials(self.sql(), id).await? {
            Some((user, Some(hash))) if self.verified.knows(&self.verified.fingerprint(id, password, &hash)) => {
                Some(user)
            }
            _ => None,
        })
    }

    /// Creates a group; `Conflict` when the id is taken.
    pub async fn create_group(&self, group: Group) -> Result<Group, Error> {
        check_group(&group)?;
        let id = group.id.clone();
        self.store
            .write_all(&[db::group_insert(&group)])
            .await
            .map_err(|e| on_conflict(e, ErrorKind::Conflict, || format!("a group with id '{id}' already exists")))?;
        self.group(&id).await
    }

    /// Group `id`; `NotFound` when there is none.
    pub async fn group(&self, id: &str) -> Result<Group, Error> {
        db::group_get(self.sql(), id)
            .await?
            .ok_or_else(|| store_error(ErrorKind::NotFound, format!("there is no group '{id}'")))
    }

    /// Every group, by id; only those user `member` is in when given.
    pub async fn groups(&self, member: Option<&str>) -> Result<Vec<Group>, Error> {
        Ok(db::group_list(self.sql(), member).await?)
    }

    /// Changes what `change` names of group `id`.
    pub async fn update_group(&self, id: &str, change: GroupChange) -> Result<Group, Error> {
        let mut group = self.group(id).await?;
        if let Some(n) = change.name {
            group.name = n;
        }
        if let Some(k) = change.kind {
            group.kind = k;
        }
        check_group(&group)?;
        self.store
            .write_all(&[db::group_update(&group)])
            .await
            .map_err(|e| on_conflict(e, ErrorKind::NotFound, || format!("there is no group '{id}'")))?;
        self.group(id).await
    }

    /// Deletes group `id` and its memberships (the tasks whose candidates name it keep the name).
    pub async fn delete_group(&self, id: &str) -> Result<(), Error> {
        self.store
            .write_all(&db::group_delete(id))
            .await
            .map_err(|e| on_conflict(e, ErrorKind::NotFound, || format!("there is no group '{id}'")))?;
        Ok(())
    }

    /// Makes `user` a member of `group`: `NotFound` naming whichever does not exist, `Conflict`
    /// when they already are.
    pub async fn add_member(&self, group: &str, user: &str) -> Result<(), Error> {
        self.group(group).await?;
        check_id("userId", user)?;
        if db::user_get(self.sql(), user).await?.is_none() {
            return Err(store_error(ErrorKind::NotFound, format!("there is no user '{user}'")));
        }
        let conflict = || format!("user '{user}' is already a member of group '{group}'");
        if db::is_member(self.sql(), user, group).await? {
            return Err(store_error(ErrorKind::Conflict, conflict()));
        }
        match self.store.write_all(&[db::membership_insert(user, group)]).await {
            Ok(_) => Ok(()),
            // Lost a race: the key is taken (already a member), or one of the two was deleted.
            Err(e) if e.kind == ErrorKind::Conflict || e.kind == ErrorKind::Invalid => {
                if db::is_member(self.sql(), user, group).await? {
                    Err(store_error(ErrorKind::Conflict, conflict()))
                } else {
                    Err(store_error(ErrorKind::NotFound, format!("user '{user}' or group '{group}' was just deleted")))
                }
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The caller `user` is: their groups and the role those give.
    pub async fn principal(&self, user: &User) -> Result<Principal, Error> {
        let groups: Vec<String> = self.groups(Some(&user.id)).await?.into_iter().map(|g| g.id).collect();
        Ok(Principal {
            user_id: Some(user.id.clone()),
            role: Role::of_groups(&groups),
            groups,
            tenant_id: user.tenant_id.clone(),
        })
    }

    /// Makes an API token for `user`, named `name`: the token (shown once: only its hash is
    /// kept) and what is kept of it.
    pub async fn create_token(&self, user: &str, name: Option<String>) -> Result<(String, TokenInfo), Error> {
        check_text("name", &name)?;
        self.user(user).await?;
        let token = format!("{TOKEN_PREFIX}{}", random_hex());
        let id = kairos_core::new_id();
        let now = self.store.db_now().await?;
        self.store
            .write_all(&[db::token_insert(&id, user, &token_hash(&token), &name, now)])
            .await
            .map_err(|e| on_conflict(e, ErrorKind::NotFound, || format!("there is no user '{user}'")))?;
        let info = db::token_list(self.sql(), user)
            .await?
            .into_iter()
            .find(|t| t.id == id)
            .ok_or_else(|| store_error(ErrorKind::NotFound, format!("user '{user}' was just deleted")))?;
        Ok((token, info))
    }

    /// The user an API token belongs to, if it is one of theirs.
    pub async fn token_user(&self, token: &str) -> Result<Option<User>, Error> {
        if !token.starts_with(TOKEN_PREFIX) || token.len() > 128 {
            return Ok(None);
        }
        Ok(db::token_user(self.sql(), &token_hash(token)).await?.map(|(_, u)| u))
    }

    /// User `user`'s API tokens (never the tokens themselves).
    pub async fn tokens(&self, user: &str) -> Result<Vec<TokenInfo>, Error> {
        self.user(user).await?;
        Ok(db::token_list(self.sql(), user).await?)
    }

    /// Revokes API token `id` of `user`.
    pub async fn revoke_token(&self, user: &str, id: &str) -> Result<(), Error> {
        self.store
            .write_all(&[db::token_delete(user, id)])
            .await
            .map_err(|e| on_conflict(e, ErrorKind::NotFound, || format!("user '{user}' has no token {id}")))?;
        Ok(())
    }

    /// Opens a console session for `user` (whose password the caller checked), ending after
    /// [`SESSION_LIFETIME`]: its secret (for the cookie; only its hash is kept).
    pub async fn open_session(&self, user: &str, origin: &SessionOrigin) -> Result<String, Error> {
        let secret = format!("{SESSION_PREFIX}{}", random_hex());
        let now = self.store.db_now().await?;
        let expires = now
            .checked_add(
                jiff::SignedDuration::try_from(SESSION_LIFETIME).unwrap_or(jiff::SignedDuration::from_hours(12)),
            )
            .map_err(|e| Error::Config(format!("session expiry: {e}")))?;
        let origin = SessionOrigin {
            ip_address: origin.ip_address.as_ref().map(|s| s.chars().take(MAX_TEXT_CHARS).collect()),
            user_agent: origin.user_agent.as_ref().map(|s| s.chars().take(MAX_TEXT_CHARS).collect()),
        };
        let id = kairos_core::new_id();
        self.store
            .write_all(&db::session_insert(&id, user, &token_hash(&secret), now, expires, &origin))
            .await
            .map_err(|e| on_conflict(e, ErrorKind::NotFound, || format!("there is no user '{user}'")))?;
        Ok(secret)
    }

    /// The user whose console session `secret` is, while it has not ended.
    pub async fn session_user(&self, secret: &str) -> Result<Option<User>, Error> {
        if !secret.starts_with(SESSION_PREFIX) || secret.len() > 128 {
            return Ok(None);
        }
        let now = self.store.db_now().await?;
        Ok(db::session_user(self.sql(), &token_hash(secret), now).await?)
    }

    /// Ends the console session `secret` (nothing when there is none).
    pub async fn close_session(&self, secret: &str) -> Result<(), Error> {
        self.store.write_all(&[db::session_delete(&token_hash(secret))]).await?;
        Ok(())
    }

    /// Ends `user`'s membership of `group`; `NotFound` when there is none.
    pub async fn remove_member(&self, group: &str, user: &str) -> Result<(), Error> {
        self.store.write_all(&[db::membership_delete(user, group)]).await.map_err(|e| {
            on_conflict(e, ErrorKind::NotFound, || format!("user '{user}' is not a member of group '{group}'"))
        })?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn hashes_are_salted_argon2id_and_verify_only_their_password() {
        let a = hash_password("correct horse".into()).await.unwrap();
        let b = hash_password("correct horse".into()).await.unwrap();
        assert!(a.starts_with("$argon2id$"), "{a}");
        assert_ne!(a, b, "each hash has its own salt");
        assert!(!a.contains("correct horse"));
        assert!(verify_password("correct horse".into(), a.clone()).await);
        assert!(!verify_password("correct horsf".into(), a).await);
        assert!(!verify_password("x".into(), "not a phc string".into()).await);
    }

    #[test]
    fn ids_are_refused_with_the_reason() {
        assert!(check_id("id", "kermit").is_ok());
        for bad in ["", " ", "a:b", "tab\there", &"x".repeat(65)] {
            let e = check_id("id", bad).unwrap_err().to_string();
            assert!(e.contains("id"), "{bad:?}: {e}");
        }
    }
}
