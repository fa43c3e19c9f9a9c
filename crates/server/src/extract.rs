//! Extractors whose failures answer in our error shape and name the field that was wrong
//! (axum's own answer in plain text and say "Failed to deserialize …").

use crate::error::ApiError;
use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use serde::de::DeserializeOwned;

/// The largest request body: a job payload may be 1 MiB (checked by the engine, which answers
/// 400 naming `payload`), plus room for JSON escapes and the other fields. Past this the body
/// is not even read: 413.
pub const MAX_BODY_BYTES: usize = 2 * 1024 * 1024;

/// A JSON body, parsed with the path of the failing field in the message
/// (`retries: invalid type: string "x", expected i32`).
#[derive(Debug)]
pub struct Json<T>(pub T);

impl<S, T> FromRequest<S> for Json<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        parse(&json_bytes(req, state).await?).map(Json)
    }
}

/// A JSON body that may be an object or a list (Flowable's variable calls take a list), with
/// the same checks as [`Json`] otherwise.
#[derive(Debug)]
pub struct JsonAny(pub serde_json::Value);

impl<S: Send + Sync> FromRequest<S> for JsonAny {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = json_bytes(req, state).await?;
        if bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
            if let Some(key) = duplicate_key(&bytes) {
                let message = format!("{key}: this key appears twice in one JSON object; send it once");
                let mut err = ApiError::new(StatusCode::BAD_REQUEST, "invalid-json", message);
                err.field = Some(key);
                return Err(err);
            }
            return serde_json::from_slice(&bytes).map(JsonAny).map_err(|e| {
                ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "invalid-json",
                    format!("the request body is not valid JSON: {e}"),
                )
            });
        }
        parse(&bytes).map(JsonAny)
    }
}

/// Whether the request says its body is JSON (`application/json` or `…+json`, in any case):
/// the one test of the JSON extractors and of the tenant guard, so that both read the same bodies.
pub fn is_json(headers: &axum::http::HeaderMap) -> bool {
    let ct = headers.get(header::CONTENT_TYPE).map(|ct| ct.to_str().unwrap_or("?"));
    let essence = ct.map(|ct| ct.split(';').next().unwrap_or("").trim().to_ascii_lowercase());
    essence.is_some_and(|e| e == "application/json" || e.ends_with("+json"))
}

/// The body of a JSON request: its type checked, read within the limits.
async fn json_bytes<S: Send + Sync>(req: Request, state: &S) -> Result<Bytes, ApiError> {
    // Required, not assumed: a web page can send a body without a type, or as text/plain,
    // to any site without asking (a CORS "simple request"), but application/json only
    // after a preflight this API never grants (see `site`).
    let ct = req.headers().get(header::CONTENT_TYPE).map(|ct| ct.to_str().unwrap_or("?"));
    if !is_json(req.headers()) {
        let not = ct.map_or_else(|| "no Content-Type".to_string(), |ct| format!("\"{ct}\""));
        let mut err = ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported-media-type",
            format!(
                "the body must be JSON with Content-Type: application/json, not {not} (with curl: -H 'Content-Type: application/json')"
            ),
        );
        err.field = Some("Content-Type".into());
        return Err(err);
    }
    let bytes = Bytes::from_request(req, state).await.map_err(|rejection| {
            if let Some(limit) = crate::conn::BodyTimeout::in_chain(&rejection) {
                body_timeout(limit)
            } else if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::new(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "payload-too-large",
                    format!(
                        "the request body is over {MAX_BODY_BYTES} bytes (2 MiB); a job payload may be at most 1 MiB — keep large data in your own tables and pass its id"
                    ),
                )
            } else {
                ApiError::new(rejection.status(), "invalid-body", format!("the request body could not be read: {}", rejection.body_text()))
            }
        })?;
    Ok(bytes)
}

/// 408: the body did not arrive within the server's body read timeout.
pub fn body_timeout(limit: std::time::Duration) -> ApiError {
    ApiError::new(
        StatusCode::REQUEST_TIMEOUT,
        "request-timeout",
        format!("the request body did not arrive within {} s of its headers; send it at once", limit.as_secs_f64()),
    )
}

/// Parses a JSON body, naming the failing field.
pub fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid-json",
            "the request body is empty; send a JSON object",
        ));
    }
    // Every body of this API is an object; serde would otherwise read `[1, 2]` as a struct's
    // fields by position and answer with a puzzling message.
    if bytes.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid-json",
            "the request body must be a JSON object: {...}",
        ));
    }
    if let Some(key) = duplicate_key(bytes) {
        let message = format!("{key}: this key appears twice in one JSON object; send it once");
        let mut err = ApiError::new(StatusCode::BAD_REQUEST, "invalid-json", message);
        err.field = Some(key);
        return Err(err);
    }
    let de = &mut serde_json::Deserializer::from_slice(bytes);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if inner.is_syntax() || inner.is_eof() {
            return ApiError::new(
                StatusCode::BAD_REQUEST,
                "invalid-json",
                format!("the request body is not valid JSON: {inner}"),
            );
        }
        let text = inner.to_string();
        // serde reports a missing field at the level of the object, not of the field.
        let field = match path.as_str() {
            "." | "?" | "" => text.split('`').nth(1).filter(|_| text.starts_with("missing field")).map(str::to_string),
            p => Some(p.to_string()),
        };
        let hint = match field.as_deref() {
            Some("dueDate") => " (an RFC 3339 instant such as 2026-01-01T08:00:00Z is expected)",
            _ => "",
        };
        let message = match &field {
            Some(f) if !text.starts_with("missing field") => format!("{f}: {text}{hint}"),
            _ => format!("the request body does not fit: {text}"),
        };
        let mut err = ApiError::bad_request(message);
        err.field = field;
        err
    })
}

/// The path (`variables.total`, `items[2].id`) of the first key named twice in one object of
/// `bytes`, at any depth.
///
/// serde_json keeps the last of duplicate keys in a map (a `variables` object) without a word
/// and a struct answers "duplicate field" without saying where; a client that sends a key twice
/// has a bug, and which value won must not be a guess. Malformed JSON gives `None` here: the
/// typed parse that follows names that error.
fn duplicate_key(bytes: &[u8]) -> Option<String> {
    let found = std::cell::RefCell::new(None);
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let _ = serde::de::DeserializeSeed::deserialize(Walk { path: String::new(), found: &found }, &mut de);
    found.into_inner()
}

/// Walks a JSON value, failing at the first duplicate key after noting its path in `found`.
struct Walk<'a> {
    path: String,
    found: &'a std::cell::RefCell<Option<String>>,
}

impl Walk<'_> {
    fn key(&self, key: &str) -> Self {
        let path = if self.path.is_empty() { key.to_string() } else { format!("{}.{key}", self.path) };
        Walk { path, found: self.found }
    }

    fn index(&self, i: usize) -> Self {
        Walk { path: format!("{}[{i}]", self.path), found: self.found }
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0;
        while seq.next_element_seed(self.index(i))?.is_some() {
            i += 1;
        }
        Ok(())
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let child = self.key(&key);
            if !seen.insert(key) {
                *self.found.borrow_mut() = Some(child.path);
                return Err(serde::de::Error::custom("duplicate key"));
            }
            map.next_value_seed(child)?;
        }
        Ok(())
    }
}

/// A query string. Its structs take strings and check them themselves, so that messages say
/// which parameter was wrong and what is allowed; unknown parameters are refused (a typo in a
/// filter must not silently list everything).
#[derive(Debug)]
pub struct Query<T>(pub T);

impl<S, T> FromRequestParts<S> for Query<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        match axum::extract::Query::<T>::try_from_uri(&parts.uri) {
            Ok(axum::extract::Query(q)) => Ok(Query(q)),
            Err(rejection) => {
                let text = rejection.body_text();
                let text = text.strip_prefix("Failed to deserialize query string: ").unwrap_or(&text);
                Err(ApiError::bad_request(format!("bad query parameter: {text}")))
            }
        }
    }
}

/// Page parameters of every list: `start` (default 0) and `size` (default 100, at most 1000).
pub fn page(start: Option<&str>, size: Option<&str>) -> Result<(u64, u64), ApiError> {
    let start = match start {
        None | Some("") => 0,
        Some(s) => s.parse::<u64>().map_err(|_| {
            ApiError::invalid("start", format!("start must be a whole number of 0 or more, not \"{s}\""))
        })?,
    };
    let size = match size {
        None | Some("") => 100,
        Some(s) => match s.parse::<u64>() {
            Ok(n) if n <= 1000 => n,
            _ => {
                return Err(ApiError::invalid(
                    "size",
                    format!("size must be a whole number from 0 to 1000, not \"{s}\""),
                ));
            }
        },
    };
    Ok((start, size))
}

/// A boolean query parameter: `true` or `false`.
pub fn flag(field: &'static str, value: Option<&str>) -> Result<Option<bool>, ApiError> {
    match value {
        None | Some("") => Ok(None),
        Some("true") => Ok(Some(true)),
        Some("false") => Ok(Some(false)),
        Some(v) => Err(ApiError::invalid(field, format!("{field} must be true or false, not \"{v}\""))),
    }
}

/// Path segments (`{group}/{name}`, `{name}`), with a bad segment (invalid percent-encoding) a
/// 400 in the API's error shape like every other bad input.
#[derive(Debug)]
pub struct Segments<T>(pub T);

impl<S: Send + Sync, T: serde::de::DeserializeOwned + Send> FromRequestParts<S> for Segments<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match axum::extract::Path::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Path(v)) => Ok(Segments(v)),
            Err(rejection) => Err(ApiError::invalid("path", format!("bad path segment: {}", rejection.body_text()))),
        }
    }
}

/// The `{id}` segment of a path.
#[derive(Debug)]
pub struct Id(pub String);

impl<S: Send + Sync> FromRequestParts<S> for Id {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match axum::extract::Path::<String>::from_request_parts(parts, state).await {
            Ok(axum::extract::Path(id)) => Ok(Id(id)),
            Err(rejection) => Err(ApiError::invalid("id", format!("bad id in the path: {}", rejection.body_text()))),
        }
    }
}
