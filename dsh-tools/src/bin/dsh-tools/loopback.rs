//! The browser's end of `--mcp-http`'s interactive OAuth authorization: a listener on
//! `127.0.0.1` (a port the system picks) whose URL is the redirect URI (RFC 8252's
//! loopback redirect). The user opens the authorization URL printed on stderr; the
//! authorization server sends the browser back here with `code` and `state` (or
//! `error`), which the listener reads and hands to the OAuth client, answering the
//! browser with a short page.

use std::io;
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;

/// The path the authorization server redirects to.
const CALLBACK: &str = "/callback";

/// The most of a request head read before it is answered.
const MAX_HEAD: usize = 16 * 1024;

/// A listener for one OAuth redirect.
#[derive(Debug)]
pub(crate) struct Loopback {
    listener: TcpListener,
    redirect_uri: String,
}

/// What the authorization server sent back with the browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Redirect {
    /// The whole redirect URL, as the browser asked for it.
    pub(crate) url: String,
    /// The authorization code.
    pub(crate) code: String,
    /// The `state` given in the authorization request, sent back.
    pub(crate) state: String,
}

/// Why no authorization came back.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LoopbackError {
    /// The listener could not be opened.
    #[error("cannot listen on 127.0.0.1 for the OAuth redirect: {0}")]
    Bind(#[source] io::Error),
    /// Accepting a connection failed.
    #[error("the OAuth redirect listener at {uri} failed: {source}")]
    Accept {
        /// The redirect URI.
        uri: String,
        /// The failure.
        #[source]
        source: io::Error,
    },
    /// Nothing came back in time.
    #[error(
        "no OAuth redirect reached {uri} within {} s (was the authorization URL opened? \
         --mcp-oauth-timeout SECS gives more time)",
        .limit.as_secs()
    )]
    Timeout {
        /// The redirect URI.
        uri: String,
        /// How long the listener waited.
        limit: Duration,
    },
    /// The authorization server sent an `error` back.
    #[error("the authorization server refused: {error}{}", .description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    Refused {
        /// The `error` code (`access_denied`, `invalid_scope`, ...).
        error: String,
        /// The `error_description`, if any.
        description: Option<String>,
    },
    /// The redirect lacks a parameter.
    #[error("the OAuth redirect to {uri} has no `{missing}` parameter")]
    Incomplete {
        /// The redirect URI.
        uri: String,
        /// The missing parameter.
        missing: &'static str,
    },
}

/// What one request to the listener was.
enum Outcome {
    /// Not the redirect (another path, a favicon): answered 404, keep waiting.
    Other,
    /// The redirect, read.
    Done(Result<Redirect, LoopbackError>),
}

impl Loopback {
    /// Listen on `127.0.0.1`, on a port the system picks.
    ///
    /// # Errors
    ///
    /// When the socket cannot be bound.
    pub(crate) async fn bind() -> Result<Loopback, LoopbackError> {
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(LoopbackError::Bind)?;
        let port = listener.local_addr().map_err(LoopbackError::Bind)?.port();
        Ok(Loopback {
            listener,
            redirect_uri: format!("http://127.0.0.1:{port}{CALLBACK}"),
        })
    }

    /// The redirect URI to register and send in the authorization request.
    pub(crate) fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    /// Wait at most `limit` for the redirect, answering the browser; other requests
    /// (another path) get a 404 and the wait goes on. Connections are read side by
    /// side: one a browser opened ahead and left idle does not hold the redirect up.
    ///
    /// # Errors
    ///
    /// See [`LoopbackError`]: a timeout, an `error=` redirect, a redirect without
    /// `code` or `state`.
    pub(crate) async fn wait(&self, limit: Duration) -> Result<Redirect, LoopbackError> {
        let deadline = Instant::now() + limit;
        // Dropped on return: the reads still pending end with it.
        let mut reading = tokio::task::JoinSet::new();
        loop {
            tokio::select! {
                accepted = self.listener.accept() => {
                    let (mut stream, _) = accepted.map_err(|source| LoopbackError::Accept {
                        uri: self.redirect_uri.clone(),
                        source,
                    })?;
                    reading.spawn(async move {
                        let target = read_target(&mut stream).await;
                        (stream, target)
                    });
                }
                Some(Ok((mut stream, target))) = reading.join_next() => {
                    match target.map_or(Outcome::Other, |t| self.read(&t)) {
                        Outcome::Other => {
                            respond(&mut stream, "404 Not Found", "Not the OAuth redirect.").await;
                        }
                        Outcome::Done(result) => {
                            let (status, text) = match &result {
                                Ok(_) => ("200 OK", "Authorized: you can close this window.".into()),
                                Err(e) => ("400 Bad Request", format!("Not authorized: {e}")),
                            };
                            respond(&mut stream, status, &text).await;
                            return result;
                        }
                    }
                }
                () = tokio::time::sleep_until(deadline) => {
                    return Err(LoopbackError::Timeout {
                        uri: self.redirect_uri.clone(),
                        limit,
                    });
                }
            }
        }
    }

    /// Read a request target: the redirect's parameters, or another path.
    fn read(&self, target: &str) -> Outcome {
        let Ok(url) = url::Url::parse(&self.redirect_uri).and_then(|base| base.join(target)) else {
            return Outcome::Other;
        };
        if url.path() != CALLBACK {
            return Outcome::Other;
        }
        let param = |name: &str| {
            url.query_pairs()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.into_owned())
        };
        if let Some(error) = param("error") {
            return Outcome::Done(Err(LoopbackError::Refused {
                error,
                description: param("error_description"),
            }));
        }
        let missing = |missing| LoopbackError::Incomplete {
            uri: self.redirect_uri.clone(),
            missing,
        };
        Outcome::Done(match (param("code"), param("state")) {
            (Some(code), Some(state)) => Ok(Redirect {
                url: url.to_string(),
                code,
                state,
            }),
            (None, _) => Err(missing("code")),
            (_, None) => Err(missing("state")),
        })
    }
}

/// The target of a `GET` request's line, or `None` for anything else.
async fn read_target(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut buf = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_HEAD {
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&head);
    let mut words = text.lines().next()?.split_whitespace();
    match (words.next(), words.next()) {
        (Some("GET"), Some(target)) => Some(target.to_string()),
        _ => None,
    }
}

/// Answer the browser with `status` and a one-line page, and close.
async fn respond(stream: &mut TcpStream, status: &str, text: &str) {
    let escaped = text
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    let body = format!(
        "<!doctype html><meta charset=\"utf-8\"><title>dsh-tools</title><p>{escaped}</p>\n"
    );
    let response = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\n\
         cache-control: no-store\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    // The browser may be gone: what matters is the redirect, already read.
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::{Loopback, LoopbackError};
    use std::time::Duration;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    /// GET `target` from the listener; the response's status line.
    async fn get(uri: &str, target: &str) -> String {
        let addr = uri
            .trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap()
            .to_string();
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let request = format!("GET {target} HTTP/1.1\r\nhost: x\r\n\r\n");
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).await.unwrap();
        response.lines().next().unwrap_or_default().to_string()
    }

    #[tokio::test]
    async fn the_redirect_is_read_and_other_paths_are_not() {
        let loopback = Loopback::bind().await.unwrap();
        let uri = loopback.redirect_uri().to_string();
        assert!(uri.starts_with("http://127.0.0.1:") && uri.ends_with("/callback"));
        let browser = tokio::spawn(async move {
            let other = get(&uri, "/favicon.ico").await;
            let done = get(&uri, "/callback?code=c%2F1&state=s1&iss=http%3A%2F%2Fas").await;
            (other, done)
        });
        let redirect = loopback.wait(Duration::from_secs(30)).await.unwrap();
        assert_eq!(redirect.code, "c/1");
        assert_eq!(redirect.state, "s1");
        assert!(
            redirect.url.contains("iss=http%3A%2F%2Fas"),
            "{}",
            redirect.url
        );
        let (other, done) = browser.await.unwrap();
        assert!(other.contains("404"), "{other}");
        assert!(done.contains("200"), "{done}");
    }

    /// A connection opened ahead and left idle (as browsers do) does not hold up the
    /// redirect that comes on another.
    #[tokio::test]
    async fn an_idle_connection_does_not_hold_up_the_redirect() {
        let loopback = Loopback::bind().await.unwrap();
        let uri = loopback.redirect_uri().to_string();
        let addr = uri
            .trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap()
            .to_string();
        let idle = tokio::net::TcpStream::connect(&addr).await.unwrap();
        let browser = tokio::spawn(async move { get(&uri, "/callback?code=c2&state=s2").await });
        let redirect = loopback.wait(Duration::from_secs(60)).await.unwrap();
        assert_eq!(
            (redirect.code.as_str(), redirect.state.as_str()),
            ("c2", "s2")
        );
        assert!(browser.await.unwrap().contains("200"));
        drop(idle);
    }

    #[tokio::test]
    async fn an_error_redirect_and_a_missing_code_are_errors() {
        let loopback = Loopback::bind().await.unwrap();
        let uri = loopback.redirect_uri().to_string();
        let browser = tokio::spawn(async move {
            get(
                &uri,
                "/callback?error=access_denied&error_description=the+user+said+no&state=s",
            )
            .await
        });
        let e = loopback.wait(Duration::from_secs(30)).await.unwrap_err();
        assert!(matches!(e, LoopbackError::Refused { .. }));
        assert_eq!(
            e.to_string(),
            "the authorization server refused: access_denied (the user said no)"
        );
        assert!(browser.await.unwrap().contains("400"));

        let uri = loopback.redirect_uri().to_string();
        let browser = tokio::spawn(async move { get(&uri, "/callback?state=s").await });
        let e = loopback.wait(Duration::from_secs(30)).await.unwrap_err();
        assert!(e.to_string().contains("no `code` parameter"), "{e}");
        let _ = browser.await;
    }

    /// Nobody connects: the wait ends with the timeout's error.
    #[tokio::test]
    async fn nothing_in_time_is_a_timeout_naming_the_uri() {
        let loopback = Loopback::bind().await.unwrap();
        let e = loopback.wait(Duration::from_millis(20)).await.unwrap_err();
        assert!(matches!(e, LoopbackError::Timeout { .. }), "{e}");
        let text = e.to_string();
        assert!(text.contains(loopback.redirect_uri()), "{text}");
        assert!(text.contains("--mcp-oauth-timeout"), "{text}");
    }
}
