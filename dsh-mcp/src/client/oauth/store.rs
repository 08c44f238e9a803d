//! [`TokenStore`]: where a client keeps its tokens between requests and runs
//! ([`MemoryTokenStore`], [`FileTokenStore`]), and the adapter rmcp's authorization
//! manager reads it through.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use serde::{Deserialize, Serialize};

/// What a [`TokenStore`] method returns.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, TokenStoreError>> + Send + 'a>>;

/// A token store's failure (its text names the file or backend and the cause).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TokenStoreError(String);

impl TokenStoreError {
    /// An error with this text.
    pub fn new(message: impl Into<String>) -> TokenStoreError {
        TokenStoreError(message.into())
    }
}

/// The tokens a client holds for one MCP server: the client id they were issued to,
/// the access token (and refresh token, when one was issued), the scopes granted, when
/// they were received and the issuer that minted them.
///
/// Serialized as JSON; its fields are the OAuth token response's plus the client's
/// bookkeeping, and are not a stable format beyond this crate's version.
#[derive(Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct StoredTokens(StoredCredentials);

impl StoredTokens {
    /// The client id the tokens were issued to.
    pub fn client_id(&self) -> &str {
        &self.0.client_id
    }

    /// The access token, when the store holds one (a client id alone is kept when
    /// tokens are discarded after an authorization server change).
    pub fn access_token(&self) -> Option<&str> {
        self.0
            .token_response
            .as_ref()
            .map(|t| oauth2::TokenResponse::access_token(t).secret().as_str())
    }

    /// Whether a refresh token is held.
    pub fn has_refresh_token(&self) -> bool {
        self.0
            .token_response
            .as_ref()
            .is_some_and(|t| oauth2::TokenResponse::refresh_token(t).is_some())
    }

    /// The scopes granted.
    pub fn scopes(&self) -> &[String] {
        &self.0.granted_scopes
    }

    /// The issuer of the authorization server that minted the tokens.
    pub fn issuer(&self) -> Option<&str> {
        self.0.issuer.as_deref()
    }
}

impl fmt::Debug for StoredTokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoredTokens")
            .field("client_id", &self.0.client_id)
            .field("access_token", &self.access_token().map(|_| "[redacted]"))
            .field("refresh_token", &self.has_refresh_token())
            .field("scopes", &self.0.granted_scopes)
            .field("issuer", &self.0.issuer)
            .finish()
    }
}

/// Where an OAuth client keeps its tokens, per MCP server (the key is the server's
/// URL as given to [`ClientBuilder::connect_http`](crate::ClientBuilder::connect_http)).
///
/// The client loads the server's tokens before its first request (a valid stored token
/// means no authorization at all), saves them after each authorization and refresh,
/// and clears them when a refresh fails. [`MemoryTokenStore`] is the default;
/// [`FileTokenStore`] keeps them across runs.
pub trait TokenStore: Send + Sync {
    /// The tokens stored for `server`, if any.
    fn load<'a>(&'a self, server: &'a str) -> StoreFuture<'a, Option<StoredTokens>>;
    /// Store `tokens` for `server`, replacing any.
    fn save<'a>(&'a self, server: &'a str, tokens: StoredTokens) -> StoreFuture<'a, ()>;
    /// Forget the tokens of `server`.
    fn clear<'a>(&'a self, server: &'a str) -> StoreFuture<'a, ()>;
}

/// Tokens in memory, lost when the process ends (the default store).
#[derive(Debug, Default, Clone)]
pub struct MemoryTokenStore {
    tokens: Arc<Mutex<BTreeMap<String, StoredTokens>>>,
}

impl MemoryTokenStore {
    /// An empty store.
    pub fn new() -> MemoryTokenStore {
        MemoryTokenStore::default()
    }

    fn with<T>(&self, f: impl FnOnce(&mut BTreeMap<String, StoredTokens>) -> T) -> T {
        let mut tokens = self
            .tokens
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut tokens)
    }
}

impl TokenStore for MemoryTokenStore {
    fn load<'a>(&'a self, server: &'a str) -> StoreFuture<'a, Option<StoredTokens>> {
        let found = self.with(|t| t.get(server).cloned());
        Box::pin(async move { Ok(found) })
    }

    fn save<'a>(&'a self, server: &'a str, tokens: StoredTokens) -> StoreFuture<'a, ()> {
        self.with(|t| t.insert(server.to_string(), tokens));
        Box::pin(async { Ok(()) })
    }

    fn clear<'a>(&'a self, server: &'a str) -> StoreFuture<'a, ()> {
        self.with(|t| t.remove(server));
        Box::pin(async { Ok(()) })
    }
}

/// Tokens in a JSON file (an object keyed by server URL), for a CLI that should not
/// authorize on every run.
///
/// Every save rewrites the file atomically: a temporary file in the same directory,
/// created with mode `0600` on Unix (the tokens are secrets), written, synced and
/// renamed over the old one. A missing file is an empty store; a file that is not such
/// an object is an error naming the file. Writers in one process are serialized;
/// two processes saving at once each keep a whole file, the last one's.
#[derive(Debug, Clone)]
pub struct FileTokenStore {
    path: PathBuf,
    lock: Arc<Mutex<()>>,
}

impl FileTokenStore {
    /// A store in the file at `path` (created on the first save; its directory must
    /// exist).
    pub fn new(path: impl Into<PathBuf>) -> FileTokenStore {
        FileTokenStore {
            path: path.into(),
            lock: Arc::default(),
        }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn read(&self) -> Result<BTreeMap<String, StoredTokens>, TokenStoreError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
            Err(e) => {
                return Err(TokenStoreError::new(format!(
                    "cannot read {}: {e}",
                    self.path.display()
                )));
            }
        };
        serde_json::from_str(&text).map_err(|e| {
            TokenStoreError::new(format!(
                "{} is not a token store (a JSON object of tokens by server URL): {e}",
                self.path.display()
            ))
        })
    }

    fn write(&self, tokens: &BTreeMap<String, StoredTokens>) -> Result<(), TokenStoreError> {
        let fail =
            |what: &str, e: std::io::Error| TokenStoreError::new(format!("cannot {what}: {e}"));
        let json = serde_json::to_vec_pretty(tokens)
            .map_err(|e| TokenStoreError::new(format!("cannot serialize the tokens: {e}")))?;
        let dir = match self.path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "tokens".to_string());
        let temp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt as _;
            options.mode(0o600);
        }
        let written = (|| {
            let mut file = options
                .open(&temp)
                .map_err(|e| fail(&format!("create {}", temp.display()), e))?;
            file.write_all(&json)
                .and_then(|()| file.sync_all())
                .map_err(|e| fail(&format!("write {}", temp.display()), e))?;
            std::fs::rename(&temp, &self.path).map_err(|e| {
                fail(
                    &format!("rename {} to {}", temp.display(), self.path.display()),
                    e,
                )
            })
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        written
    }

    fn update(
        &self,
        f: impl FnOnce(&mut BTreeMap<String, StoredTokens>),
    ) -> Result<(), TokenStoreError> {
        let _guard = self
            .lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut tokens = self.read()?;
        f(&mut tokens);
        self.write(&tokens)
    }
}

// The file is small and read or written once per authorization: plain blocking I/O
// inside the future, rather than a blocking-pool hop.
impl TokenStore for FileTokenStore {
    fn load<'a>(&'a self, server: &'a str) -> StoreFuture<'a, Option<StoredTokens>> {
        Box::pin(async move {
            let _guard = self
                .lock
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            Ok(self.read()?.remove(server))
        })
    }

    fn save<'a>(&'a self, server: &'a str, tokens: StoredTokens) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            self.update(|all| {
                all.insert(server.to_string(), tokens);
            })
        })
    }

    fn clear<'a>(&'a self, server: &'a str) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            self.update(|all| {
                all.remove(server);
            })
        })
    }
}

/// A [`TokenStore`] seen as rmcp's credential store for one server, with the tokens
/// cached: rmcp reads the store before every request, and a [`FileTokenStore`] would be
/// read from disk each time. Writes go through to the store. Clones share the cache.
#[derive(Clone)]
pub(crate) struct StoreAdapter {
    store: Arc<dyn TokenStore>,
    server: String,
    /// `Some` once loaded or written: what the store holds for the server.
    cache: Arc<Mutex<Option<Option<StoredCredentials>>>>,
}

impl StoreAdapter {
    pub(crate) fn new(store: Arc<dyn TokenStore>, server: &str) -> StoreAdapter {
        StoreAdapter {
            store,
            server: server.to_string(),
            cache: Arc::default(),
        }
    }

    fn cached(&self) -> std::sync::MutexGuard<'_, Option<Option<StoredCredentials>>> {
        self.cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn store_error(e: TokenStoreError) -> AuthError {
    AuthError::CredentialStoreError(e.to_string())
}

#[async_trait::async_trait]
impl CredentialStore for StoreAdapter {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        if let Some(cached) = self.cached().clone() {
            return Ok(cached);
        }
        let tokens = self.store.load(&self.server).await.map_err(store_error)?;
        let credentials = tokens.map(|t| t.0);
        *self.cached() = Some(credentials.clone());
        Ok(credentials)
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        *self.cached() = None;
        self.store
            .save(&self.server, StoredTokens(credentials.clone()))
            .await
            .map_err(store_error)?;
        *self.cached() = Some(Some(credentials));
        Ok(())
    }

    async fn clear(&self) -> Result<(), AuthError> {
        *self.cached() = None;
        self.store.clear(&self.server).await.map_err(store_error)?;
        *self.cached() = Some(None);
        Ok(())
    }
}
