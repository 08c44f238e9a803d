//! Who a request comes from, as its validated access token says: the [`Identity`] the
//! HTTP server's OAuth layer (module `oauth`, feature `oauth`) puts into each request it
//! lets through, which the server binds tasks, approval states and limits to, and checks
//! each tool's scope against.

use std::collections::BTreeSet;
use std::fmt;

/// The identity of a request: the issuer, subject and client of its validated access
/// token, and the scopes it grants.
///
/// Its [principal](Identity::principal) (issuer, subject and client together) owns the
/// tasks and approval states the request creates, so a refreshed token (same subject,
/// same client) keeps access to them and another subject's token never gets it.
#[derive(Clone, PartialEq, Eq)]
pub struct Identity {
    issuer: String,
    subject: String,
    client_id: Option<String>,
    scopes: BTreeSet<String>,
    expires_at: u64,
}

impl fmt::Debug for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Identity")
            .field("issuer", &self.issuer)
            .field("subject", &self.subject)
            .field("client_id", &self.client_id)
            .field("scopes", &self.scopes)
            .field("expires_at", &self.expires_at)
            .finish()
    }
}

impl Identity {
    /// An identity (the OAuth layer makes them from validated tokens; tests of a
    /// server's own handlers may make their own).
    pub fn new(
        issuer: impl Into<String>,
        subject: impl Into<String>,
        client_id: Option<String>,
        scopes: impl IntoIterator<Item = String>,
        expires_at: u64,
    ) -> Identity {
        Identity {
            issuer: issuer.into(),
            subject: subject.into(),
            client_id,
            scopes: scopes.into_iter().collect(),
            expires_at,
        }
    }

    /// The token's issuer (`iss`).
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The token's subject (`sub`): the user, or for a client acting on its own behalf
    /// (client credentials), the client.
    pub fn subject(&self) -> &str {
        &self.subject
    }

    /// The client the token was issued to (`client_id`, else `azp`), when it says.
    pub fn client_id(&self) -> Option<&str> {
        self.client_id.as_deref()
    }

    /// The scopes the token grants (`scope`, space-separated, or `scp`).
    pub fn scopes(&self) -> &BTreeSet<String> {
        &self.scopes
    }

    /// Whether the token grants `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.contains(scope)
    }

    /// When the token expires (`exp`, seconds since the Unix epoch).
    pub fn expires_at(&self) -> u64 {
        self.expires_at
    }

    /// The principal: issuer, subject and client, each prefixed with its length (so no
    /// two identities share one), after a NUL byte (which no HTTP header value holds, so
    /// it never equals the `Authorization` header a request without an identity is
    /// known by).
    pub fn principal(&self) -> String {
        let client = self.client_id.as_deref().unwrap_or_default();
        format!(
            "oauth\0{}:{}{}:{}{}:{}",
            self.issuer.len(),
            self.issuer,
            self.subject.len(),
            self.subject,
            client.len(),
            client
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_principal_is_issuer_subject_and_client() {
        let a = Identity::new("https://as", "alice", Some("app".into()), [], 0);
        let refreshed = Identity::new(
            "https://as",
            "alice",
            Some("app".into()),
            ["tools:exec".to_string()],
            99,
        );
        assert_eq!(a.principal(), refreshed.principal());
        let other_client = Identity::new("https://as", "alice", Some("cli".into()), [], 0);
        assert_ne!(a.principal(), other_client.principal());
        let other_issuer = Identity::new("https://other", "alice", Some("app".into()), [], 0);
        assert_ne!(a.principal(), other_issuer.principal());
        // No confusion by moving text from one part to the next.
        let shifted = Identity::new("https://as", "alice3:app", None, [], 0);
        assert_ne!(a.principal(), shifted.principal());
        assert!(a.principal().starts_with("oauth\0"));
    }
}
