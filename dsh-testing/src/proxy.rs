//! A round-robin HTTP proxy in front of several server instances, for tests and
//! benchmarks of a deployment behind a load balancer (feature `mcp-proxy`).
//!
//! Each request goes to the next instance in turn, whatever connection it came on, as a
//! load balancer without sticky routing sends them. An instance that refuses the
//! connection (stopped, killed) is passed over for the next one, as a balancer with
//! health checks would. Responses stream back unchanged (event streams included), with
//! an `x-served-by` header naming the instance by its index. Every request is logged with
//! the instance that served it and its body, so a test can tell where each round of a
//! call ran.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt as _, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};

type Body = BoxBody<Bytes, hyper::Error>;

/// One request the proxy passed on: the instance that served it (its index in the list
/// given to [`RoundRobin::start`]) and the request's body as text.
#[derive(Clone, Debug)]
pub struct Served {
    /// The index of the instance that served the request.
    pub instance: usize,
    /// The request body (lossily decoded as UTF-8).
    pub body: String,
}

/// A running round-robin proxy; it stops when dropped.
#[derive(Debug)]
pub struct RoundRobin {
    url: String,
    log: Arc<Mutex<Vec<Served>>>,
    task: tokio::task::JoinHandle<()>,
}

struct Upstreams {
    addresses: Vec<SocketAddr>,
    next: AtomicUsize,
    log: Arc<Mutex<Vec<Served>>>,
}

impl RoundRobin {
    /// A proxy on a free loopback port in front of `instances` (URLs such as
    /// `http://127.0.0.1:PORT/mcp`, all with the same path). Its own URL, with that path,
    /// is [`RoundRobin::url`].
    ///
    /// # Panics
    ///
    /// When `instances` is empty, a URL is not `http://HOST:PORT/…` with an IP address,
    /// or no loopback port can be bound (this is test code).
    pub async fn start(instances: &[String]) -> RoundRobin {
        assert!(!instances.is_empty(), "a proxy needs at least one instance");
        let mut path = "/".to_string();
        let addresses = instances
            .iter()
            .map(|url| {
                let rest = url
                    .strip_prefix("http://")
                    .unwrap_or_else(|| panic!("not an http:// URL: {url}"));
                let (authority, tail) = rest.split_once('/').unwrap_or((rest, ""));
                path = format!("/{tail}");
                authority
                    .parse::<SocketAddr>()
                    .unwrap_or_else(|e| panic!("{url}: {e}"))
            })
            .collect();
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind a loopback port for the proxy");
        let address = listener.local_addr().expect("the proxy's address");
        let log = Arc::new(Mutex::new(Vec::new()));
        let upstreams = Arc::new(Upstreams {
            addresses,
            next: AtomicUsize::new(0),
            log: log.clone(),
        });
        let task = tokio::spawn(accept(listener, upstreams));
        RoundRobin {
            url: format!("http://{address}{path}"),
            log,
            task,
        }
    }

    /// The proxy's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Every request passed on so far, in the order they arrived.
    pub fn served(&self) -> Vec<Served> {
        lock(&self.log).clone()
    }
}

impl Drop for RoundRobin {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn accept(listener: TcpListener, upstreams: Arc<Upstreams>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        let upstreams = upstreams.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let upstreams = upstreams.clone();
                async move { Ok::<_, Infallible>(forward(&upstreams, request).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

fn plain(status: StatusCode, text: String) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(text)).map_err(|e| match e {}).boxed());
    *response.status_mut() = status;
    response
}

/// Send `request` to the next instance that takes the connection.
async fn forward(upstreams: &Upstreams, request: Request<Incoming>) -> Response<Body> {
    let (parts, body) = request.into_parts();
    let body = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) => return plain(StatusCode::BAD_REQUEST, format!("request body: {e}")),
    };
    let n = upstreams.addresses.len();
    let first = upstreams.next.fetch_add(1, Ordering::SeqCst);
    for attempt in 0..n {
        let instance = (first + attempt) % n;
        let Ok(stream) = TcpStream::connect(upstreams.addresses[instance]).await else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        let Ok((mut sender, connection)) =
            hyper::client::conn::http1::handshake(TokioIo::new(stream)).await
        else {
            continue;
        };
        tokio::spawn(connection);
        let mut upstream = Request::from_parts(parts.clone(), Full::new(body.clone()));
        if let Ok(host) = upstreams.addresses[instance].to_string().parse() {
            upstream.headers_mut().insert(hyper::header::HOST, host);
        }
        lock(&upstreams.log).push(Served {
            instance,
            body: String::from_utf8_lossy(&body).into_owned(),
        });
        return match sender.send_request(upstream).await {
            Ok(response) => {
                let (mut parts, body) = response.into_parts();
                if let Ok(value) = instance.to_string().parse() {
                    parts.headers.insert("x-served-by", value);
                }
                Response::from_parts(parts, body.boxed())
            }
            Err(e) => plain(StatusCode::BAD_GATEWAY, format!("instance {instance}: {e}")),
        };
    }
    plain(
        StatusCode::BAD_GATEWAY,
        "no instance takes connections".to_string(),
    )
}

/// The log, even after a thread panicked while holding it (entries are only pushed, so
/// what is there is whole).
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
