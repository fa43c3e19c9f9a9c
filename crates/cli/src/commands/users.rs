//! `kairos users`: users, their roles (groups `kairos-admin`, `kairos-operator`) and API
//! tokens, written straight to the store, so the first admin of a node can be made before any
//! credential exists. Passwords come from standard input only.

use super::open_engine;
use crate::cli::{GlobalArgs, UsersArgs, UsersCommand};
use crate::exit::{CliError, SUCCESS};
use crate::output::{self, Table, cell};
use kairos::identity::{ADMIN_GROUP, Group, Identity, NewUser, OPERATOR_GROUP, Role, User, UserChange};
use serde::Serialize;

/// One line of standard input, without its line ending.
fn read_password() -> Result<String, CliError> {
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .map_err(|e| CliError::bad_input(format!("cannot read the password from standard input: {e}")))?;
    let password = line.trim_end_matches(['\n', '\r']).to_string();
    if password.is_empty() {
        return Err(CliError::bad_input("the password on standard input is empty"));
    }
    Ok(password)
}

/// Makes `user` a member of `group`, creating the group when it does not exist.
async fn join(identity: &Identity, user: &str, group: &str) -> Result<(), CliError> {
    if identity.group(group).await.is_err() {
        identity.create_group(Group { id: group.into(), name: None, kind: Some("security-role".into()) }).await?;
    }
    identity.add_member(group, user).await?;
    Ok(())
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct UserLine {
    #[serde(flatten)]
    user: User,
    groups: Vec<String>,
    role: Role,
}

pub async fn run(global: &GlobalArgs, args: UsersArgs) -> Result<u8, CliError> {
    // Checked before the store is opened: a bad command creates no database.
    let password = match &args.command {
        UsersCommand::Add { password_stdin: true, .. } | UsersCommand::Passwd { password_stdin: true, .. } => {
            Some(read_password()?)
        }
        UsersCommand::Passwd { .. } => {
            return Err(CliError::bad_input("--password-stdin is required: the password is read from standard input"));
        }
        _ => None,
    };
    let engine = open_engine(&global.db).await?;
    let identity = engine.identity();
    match args.command {
        UsersCommand::Add { id, admin, operator, mut groups, first_name, last_name, email, tenant, .. } => {
            for g in &groups {
                kairos::identity::check_id("--group", g)?;
            }
            let user = User {
                id: id.clone(),
                first_name,
                last_name,
                email,
                tenant_id: tenant.unwrap_or_default(),
                ..User::default()
            };
            identity.create_user(NewUser { user, password }).await?;
            if admin {
                groups.insert(0, ADMIN_GROUP.into());
            } else if operator {
                groups.insert(0, OPERATOR_GROUP.into());
            }
            for g in &groups {
                join(identity, &id, g).await?;
            }
            output::line(&format!("added user {id}"))?;
        }
        UsersCommand::List => {
            let mut lines = Vec::new();
            for user in identity.users(None).await? {
                let p = identity.principal(&user).await?;
                lines.push(UserLine { user, groups: p.groups, role: p.role });
            }
            if global.json {
                return output::json(&lines).map(|_| SUCCESS);
            }
            let mut t = Table::new(&["ID", "ROLE", "GROUPS", "NAME", "TENANT"]);
            for l in &lines {
                let name = [l.user.first_name.as_deref(), l.user.last_name.as_deref()]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
                    .join(" ");
                let role =
                    serde_json::to_value(l.role).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
                t.row(vec![
                    l.user.id.clone(),
                    role,
                    l.groups.join(","),
                    cell(Some(&name), 40),
                    l.user.tenant_id.clone(),
                ]);
            }
            output::emit(&t.render())?;
        }
        UsersCommand::Passwd { id, .. } => {
            identity.update_user(&id, UserChange { password: Some(password), ..UserChange::default() }).await?;
            output::line(&format!("password of {id} replaced"))?;
        }
        UsersCommand::Delete { id } => {
            identity.delete_user(&id).await?;
            output::line(&format!("deleted user {id}"))?;
        }
        UsersCommand::Token { id, name } => {
            let (token, info) = identity.create_token(&id, name).await?;
            if global.json {
                let body =
                    serde_json::json!({"id": info.id, "userId": info.user_id, "name": info.name, "token": token});
                return output::json(&body).map(|_| SUCCESS);
            }
            output::line(&token)?;
        }
    }
    Ok(SUCCESS)
}
