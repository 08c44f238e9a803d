//! Enterprise-managed authorization on rmcp's `auth-enterprise-managed`: the user's ID
//! token exchanged at the identity provider for an identity assertion grant (ID-JAG),
//! redeemed at the MCP server's authorization server.

use rmcp::transport::auth::OAuthTokenResponse;
use rmcp::transport::auth::enterprise::{
    EmaAuthorizationServer, EmaClientAuthentication, EmaError, EmaExchangeRequest, EmaExchangeStage,
};

use super::{EnterpriseIdp, OAuthError};

/// What the two exchanges need besides the identity provider.
pub(super) struct Exchange<'a> {
    pub(super) idp: &'a EnterpriseIdp,
    pub(super) issuer: &'a str,
    pub(super) token_endpoint: &'a str,
    pub(super) client_id: &'a str,
    pub(super) client_secret: &'a str,
    /// `client_secret_basic` (else `client_secret_post`).
    pub(super) basic: bool,
    pub(super) resource: &'a str,
    pub(super) scopes: &'a [String],
}

impl Exchange<'_> {
    /// Both exchanges; the access token as a token response.
    pub(super) async fn run(&self) -> Result<OAuthTokenResponse, OAuthError> {
        let idp = EmaAuthorizationServer::new(
            self.idp.issuer.clone(),
            self.idp.token_endpoint.clone(),
            self.idp.client_id.clone(),
        );
        let secret = oauth2::ClientSecret::new(self.client_secret.to_string());
        let authentication = if self.basic {
            EmaClientAuthentication::ClientSecretBasic(secret)
        } else {
            EmaClientAuthentication::ClientSecretPost(secret)
        };
        let resource_as =
            EmaAuthorizationServer::new(self.issuer, self.token_endpoint, self.client_id)
                .with_client_authentication(authentication);
        let failed = |fallback: EmaExchangeStage| {
            move |e: EmaError| OAuthError::TokenEndpoint {
                url: match stage_of(&e).unwrap_or(fallback) {
                    EmaExchangeStage::IdentityProvider => self.idp.token_endpoint.clone(),
                    _ => self.token_endpoint.to_string(),
                },
                reason: e.to_string(),
            }
        };
        let http = rmcp::transport::auth::default_oauth_http_client().map_err(|e| {
            OAuthError::TokenEndpoint {
                url: self.idp.token_endpoint.clone(),
                reason: e.to_string(),
            }
        })?;
        let id_jag = EmaExchangeRequest::new_with_id_token(
            idp,
            resource_as,
            self.resource,
            &self.idp.id_token,
        )
        .with_scopes(self.scopes.iter().cloned())
        .exchange_id_jag(&http)
        .await
        .map_err(failed(EmaExchangeStage::IdentityProvider))?;
        let token = id_jag
            .exchange(&http)
            .await
            .map_err(failed(EmaExchangeStage::ResourceAuthorizationServer))?;
        let mut response = serde_json::json!({
            "access_token": token.access_token.secret(),
            "token_type": "Bearer",
        });
        if let Some(expires_in) = token.expires_in {
            response["expires_in"] = serde_json::json!(expires_in.as_secs());
        }
        if !token.scopes.is_empty() {
            let mut scopes: Vec<&String> = token.scopes.iter().collect();
            scopes.sort();
            response["scope"] = serde_json::json!(
                scopes
                    .into_iter()
                    .map(String::as_str)
                    .collect::<Vec<_>>()
                    .join(" ")
            );
        }
        serde_json::from_value(response).map_err(|e| OAuthError::TokenEndpoint {
            url: self.token_endpoint.to_string(),
            reason: format!("the access token cannot be kept: {e}"),
        })
    }
}

/// The exchange an error comes from, when it says.
fn stage_of(error: &EmaError) -> Option<EmaExchangeStage> {
    match error {
        EmaError::InvalidResponse { stage, .. } | EmaError::OAuthRejected { stage, .. } => {
            Some(*stage)
        }
        EmaError::RequestFailed(stage)
        | EmaError::InvalidGrant(stage)
        | EmaError::InsufficientUserAuthentication(stage) => Some(*stage),
        _ => None,
    }
}
