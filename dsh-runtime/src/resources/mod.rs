//! Resources: the context a server publishes for reading (files, records, schemas), by
//! URI, fixed or from a URI template, each read by an async function.
//!
//! A [`Resources`] collection holds them; an MCP server serves it
//! (`resources/list`, `resources/templates/list`, `resources/read`, subscriptions) and an
//! in-process host uses the same calls ([`Resources::list`], [`Resources::read`]).
//!
//! [`#[resource]`](macro@crate::resource) makes a resource of an async fn (its URI
//! template checked against its parameters at compile time), and
//! [`#[context]`](macro@crate::context) the resources of an impl block, sharing its
//! value; by hand:
//!
//! ```
//! use dsh_runtime::content::ResourceContents;
//! use dsh_runtime::resources::{Resource, ResourceError, Resources};
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let resources = Resources::new();
//! let _readme = resources
//!     .register(Resource::fixed("docs://readme", "readme", |uri, _| async move {
//!         Ok(vec![ResourceContents::text(uri, "hello")])
//!     }))
//!     .unwrap();
//! let _user = resources
//!     .register(Resource::template("users://{id}/profile", "profile", |uri, params| async move {
//!         let id: u64 = params.parse("id")?;
//!         Ok(vec![ResourceContents::text(uri, format!("user {id}"))])
//!     }).unwrap())
//!     .unwrap();
//! let read = resources.read("users://7/profile").await.unwrap();
//! assert_eq!(read[0], ResourceContents::text("users://7/profile", "user 7"));
//! assert!(matches!(resources.read("users://x/profile").await, Err(ResourceError::InvalidParams { .. })));
//! assert!(matches!(resources.read("nope://").await, Err(ResourceError::NotFound(_))));
//! # });
//! ```

#[doc(hidden)]
#[path = "macro_support.rs"]
pub mod __macro;
mod contents;
mod template;

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::str::FromStr;
use std::sync::{Arc, RwLock};

use tokio::sync::{broadcast, watch};

pub use contents::{IntoContents, Json};
pub use template::{TemplateError, UriTemplate};

use crate::complete::{Completer, Completion, CompletionRequest};
use crate::content::{Annotations, ResourceContents};

/// What a resource's read returns.
pub type ReadFuture =
    Pin<Box<dyn Future<Output = Result<Vec<ResourceContents>, ResourceError>> + Send>>;

type ReadFn = dyn Fn(String, TemplateParams) -> ReadFuture + Send + Sync;

/// The placeholders' values of a URI read through a template.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TemplateParams(Vec<(String, String)>);

impl TemplateParams {
    /// The text of placeholder `name`, if it has one.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Placeholder `name` parsed as `T`.
    ///
    /// # Errors
    ///
    /// [`ResourceError::InvalidParams`] naming the placeholder when it is missing or
    /// does not parse.
    pub fn parse<T: FromStr>(&self, name: &str) -> Result<T, ResourceError>
    where
        T::Err: fmt::Display,
    {
        let text = self.get(name).ok_or_else(|| ResourceError::InvalidParams {
            placeholder: name.to_string(),
            reason: "no value".into(),
        })?;
        text.parse()
            .map_err(|e: T::Err| ResourceError::InvalidParams {
                placeholder: name.to_string(),
                reason: format!("{text:?}: {e}"),
            })
    }

    /// Every placeholder and its value, in the template's order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }
}

/// What a resource or template publishes about itself.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct ResourceInfo {
    /// Its URI, or its URI template.
    pub uri: String,
    /// Its name (an identifier).
    pub name: String,
    /// A title to show.
    pub title: Option<String>,
    /// What it holds.
    pub description: Option<String>,
    /// Its MIME type, when known.
    pub mime_type: Option<String>,
    /// Its size in bytes, when known (fixed resources only).
    pub size: Option<u64>,
    /// Hints for the client (audience, priority, last modified).
    pub annotations: Option<Annotations>,
}

/// One resource, or one template of resources, and how it is read.
#[derive(Clone)]
pub struct Resource {
    info: ResourceInfo,
    template: UriTemplate,
    read: Arc<ReadFn>,
    completers: BTreeMap<String, Completer>,
}

impl fmt::Debug for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resource")
            .field("info", &self.info)
            .field("completers", &self.completers)
            .finish_non_exhaustive()
    }
}

impl Resource {
    /// A resource at the fixed URI `uri`, named `name`, read by `read` (given the URI and
    /// no placeholders).
    pub fn fixed<F, Fut>(uri: impl Into<String>, name: impl Into<String>, read: F) -> Resource
    where
        F: Fn(String, TemplateParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ResourceContents>, ResourceError>> + Send + 'static,
    {
        let uri = uri.into();
        let template = UriTemplate {
            text: uri.clone(),
            parts: vec![template::literal(&uri)],
        };
        Resource::of(template, name.into(), read)
    }

    /// The resources of the URI template `template` (RFC 6570 level 1), read by `read`
    /// (given the URI and its placeholders' values).
    ///
    /// # Errors
    ///
    /// The template does not parse.
    pub fn template<F, Fut>(
        template: &str,
        name: impl Into<String>,
        read: F,
    ) -> Result<Resource, TemplateError>
    where
        F: Fn(String, TemplateParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ResourceContents>, ResourceError>> + Send + 'static,
    {
        Ok(Resource::of(
            UriTemplate::parse(template)?,
            name.into(),
            read,
        ))
    }

    fn of<F, Fut>(template: UriTemplate, name: String, read: F) -> Resource
    where
        F: Fn(String, TemplateParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ResourceContents>, ResourceError>> + Send + 'static,
    {
        Resource {
            info: ResourceInfo {
                uri: template.as_str().to_string(),
                name,
                ..ResourceInfo::default()
            },
            template,
            read: Arc::new(move |uri, params| Box::pin(read(uri, params))),
            completers: BTreeMap::new(),
        }
    }

    /// With a title.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.info.title = Some(title.into());
        self
    }

    /// With a description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.info.description = Some(description.into());
        self
    }

    /// With a MIME type.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.info.mime_type = Some(mime_type.into());
        self
    }

    /// With a size in bytes.
    pub fn with_size(mut self, size: u64) -> Self {
        self.info.size = Some(size);
        self
    }

    /// With annotations.
    pub fn with_annotations(mut self, annotations: Annotations) -> Self {
        self.info.annotations = Some(annotations);
        self
    }

    /// Complete placeholder `name` with `completer`.
    pub fn with_completer(mut self, name: impl Into<String>, completer: Completer) -> Self {
        self.completers.insert(name.into(), completer);
        self
    }

    /// What it publishes.
    pub fn info(&self) -> &ResourceInfo {
        &self.info
    }

    /// Its URI template (a fixed resource's is its URI, without placeholders).
    pub fn uri_template(&self) -> &UriTemplate {
        &self.template
    }
}

/// Why a resource could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResourceError {
    /// No resource or template has this URI (MCP: `-32602`, with the URI).
    NotFound(String),
    /// A placeholder's value is not one the resource takes (MCP: `-32602`).
    InvalidParams {
        /// The placeholder.
        placeholder: String,
        /// Why.
        reason: String,
    },
    /// The contents are larger than the collection's cap.
    TooLarge {
        /// The URI.
        uri: String,
        /// The cap, in bytes.
        limit: usize,
    },
    /// The read failed (its own error, or a panic).
    Failed(String),
}

impl fmt::Display for ResourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResourceError::NotFound(uri) => write!(f, "resource not found: {uri}"),
            ResourceError::InvalidParams {
                placeholder,
                reason,
            } => write!(f, "placeholder `{{{placeholder}}}`: {reason}"),
            ResourceError::TooLarge { uri, limit } => {
                write!(f, "resource {uri} is larger than {limit} bytes")
            }
            ResourceError::Failed(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for ResourceError {}

/// Resources that share one value: a type whose `impl` block carries `#[context]`
/// implements it for its `#[resource]` methods; register them all with
/// [`Resources::register_group`].
pub trait ResourceGroup: Send + Sync + 'static {
    /// Every resource of this value, sharing it.
    fn resources(self: Arc<Self>) -> Vec<Resource>;
}

/// Unregisters its resource (or resources, from [`Resources::register_all`]) when
/// dropped, unless [`ResourceHandle::keep`] was called.
#[must_use = "the resource is unregistered when the handle is dropped; call `keep()` to keep it"]
pub struct ResourceHandle {
    resources: Resources,
    ids: Vec<u64>,
    kept: bool,
}

impl ResourceHandle {
    /// Keep the resource registered for as long as the collection lives.
    pub fn keep(mut self) {
        self.kept = true;
    }
}

impl Drop for ResourceHandle {
    fn drop(&mut self) {
        if !self.kept {
            self.resources.unregister(&self.ids);
        }
    }
}

impl fmt::Debug for ResourceHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceHandle")
            .field("ids", &self.ids)
            .finish()
    }
}

#[derive(Default)]
struct Inner {
    next: u64,
    entries: Vec<(u64, Resource)>,
}

/// A collection of resources (see the [module docs](self)). Clones share it.
#[derive(Clone)]
pub struct Resources {
    inner: Arc<RwLock<Inner>>,
    changes: Arc<watch::Sender<u64>>,
    updates: broadcast::Sender<String>,
    max_bytes: Option<usize>,
}

impl Default for Resources {
    fn default() -> Self {
        Resources::new()
    }
}

impl fmt::Debug for Resources {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resources")
            .field("len", &self.read_inner().entries.len())
            .finish_non_exhaustive()
    }
}

impl Resources {
    /// An empty collection.
    pub fn new() -> Resources {
        Resources {
            inner: Arc::default(),
            changes: Arc::new(watch::channel(0).0),
            updates: broadcast::channel(256).0,
            max_bytes: None,
        }
    }

    /// Refuse contents larger than `bytes` (text bytes, or base64 characters of a blob)
    /// with [`ResourceError::TooLarge`].
    pub fn with_max_bytes(mut self, bytes: usize) -> Resources {
        self.max_bytes = Some(bytes);
        self
    }

    fn read_inner(&self) -> std::sync::RwLockReadGuard<'_, Inner> {
        self.inner.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write_inner(&self) -> std::sync::RwLockWriteGuard<'_, Inner> {
        self.inner.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Register `resource`.
    ///
    /// # Errors
    ///
    /// Another resource has the same URI (or template), or the same name.
    pub fn register(&self, resource: impl Into<Resource>) -> Result<ResourceHandle, ResourceError> {
        self.register_all([resource.into()])
    }

    /// Register every one of `resources`: all of them, or none (one list change), under
    /// one handle.
    ///
    /// # Errors
    ///
    /// Two of them, or one of them and a registered resource, have the same URI (or
    /// template) or the same name.
    pub fn register_all(
        &self,
        resources: impl IntoIterator<Item = Resource>,
    ) -> Result<ResourceHandle, ResourceError> {
        let resources: Vec<Resource> = resources.into_iter().collect();
        let mut inner = self.write_inner();
        for (i, resource) in resources.iter().enumerate() {
            let clash = |r: &&Resource| {
                r.info.uri == resource.info.uri || r.info.name == resource.info.name
            };
            let registered = inner.entries.iter().map(|(_, r)| r);
            if let Some(other) = registered.chain(&resources[..i]).find(clash) {
                return Err(ResourceError::Failed(format!(
                    "resource {} ({}) is already registered as {} ({})",
                    resource.info.name, resource.info.uri, other.info.name, other.info.uri
                )));
            }
        }
        let mut ids = Vec::with_capacity(resources.len());
        for resource in resources {
            inner.next += 1;
            let id = inner.next;
            ids.push(id);
            inner.entries.push((id, resource));
        }
        drop(inner);
        if !ids.is_empty() {
            self.changed();
        }
        Ok(ResourceHandle {
            resources: self.clone(),
            ids,
            kept: false,
        })
    }

    /// Register every resource of `group` (see [`ResourceGroup`]): all of them, or none.
    ///
    /// # Errors
    ///
    /// As [`Resources::register_all`].
    pub fn register_group<G: ResourceGroup>(
        &self,
        group: Arc<G>,
    ) -> Result<ResourceHandle, ResourceError> {
        self.register_all(group.resources())
    }

    fn unregister(&self, ids: &[u64]) {
        let removed = {
            let mut inner = self.write_inner();
            let before = inner.entries.len();
            inner.entries.retain(|(i, _)| !ids.contains(i));
            before != inner.entries.len()
        };
        if removed {
            self.changed();
        }
    }

    fn changed(&self) {
        self.changes.send_modify(|n| *n += 1);
    }

    /// Whether the collection holds nothing.
    pub fn is_empty(&self) -> bool {
        self.read_inner().entries.is_empty()
    }

    /// The fixed resources, in registration order.
    pub fn list(&self) -> Vec<ResourceInfo> {
        self.read_inner()
            .entries
            .iter()
            .filter(|(_, r)| r.template.is_fixed())
            .map(|(_, r)| r.info.clone())
            .collect()
    }

    /// The templates, in registration order.
    pub fn templates(&self) -> Vec<ResourceInfo> {
        self.read_inner()
            .entries
            .iter()
            .filter(|(_, r)| !r.template.is_fixed())
            .map(|(_, r)| r.info.clone())
            .collect()
    }

    /// The resource answering `uri`: a fixed one first, then the first template that
    /// matches, with its placeholders' values.
    fn find(&self, uri: &str) -> Option<(Resource, TemplateParams)> {
        let inner = self.read_inner();
        let fixed = inner
            .entries
            .iter()
            .find(|(_, r)| r.template.is_fixed() && r.info.uri == uri);
        if let Some((_, r)) = fixed {
            return Some((r.clone(), TemplateParams::default()));
        }
        inner.entries.iter().find_map(|(_, r)| {
            let values = r.template.matches(uri)?;
            (!r.template.is_fixed()).then(|| (r.clone(), TemplateParams(values)))
        })
    }

    /// Whether some resource or template answers `uri`.
    pub fn knows(&self, uri: &str) -> bool {
        self.find(uri).is_some()
    }

    /// What the resource or template answering `uri` publishes (a template's `uri` is
    /// its template), if one does.
    pub fn resolve(&self, uri: &str) -> Option<ResourceInfo> {
        self.find(uri).map(|(resource, _)| resource.info)
    }

    /// Read `uri`.
    ///
    /// # Errors
    ///
    /// [`ResourceError::NotFound`] when nothing answers it; the read's own error; a
    /// panic in the read as [`ResourceError::Failed`]; contents over the cap as
    /// [`ResourceError::TooLarge`].
    pub async fn read(&self, uri: &str) -> Result<Vec<ResourceContents>, ResourceError> {
        let (resource, params) = self
            .find(uri)
            .ok_or_else(|| ResourceError::NotFound(uri.to_string()))?;
        let fut = crate::panic::contain(|| (resource.read)(uri.to_string(), params))
            .map_err(|p| ResourceError::Failed(format!("resource {uri} panicked: {p}")))?;
        let contents = crate::panic::CatchUnwind::new(fut)
            .await
            .map_err(|p| ResourceError::Failed(format!("resource {uri} panicked: {p}")))??;
        if let Some(limit) = self.max_bytes {
            let size: usize = contents
                .iter()
                .map(|c| match c {
                    ResourceContents::Text { text, .. } => text.len(),
                    ResourceContents::Blob { blob, .. } => blob.len(),
                    _ => 0,
                })
                .sum();
            if size > limit {
                return Err(ResourceError::TooLarge {
                    uri: uri.to_string(),
                    limit,
                });
            }
        }
        Ok(contents)
    }

    /// Complete placeholder `request.argument` of the template `template` (as written).
    /// A placeholder without a completer completes to nothing.
    pub async fn complete(&self, template: &str, request: CompletionRequest) -> Option<Completion> {
        let completer = {
            let inner = self.read_inner();
            let (_, resource) = inner
                .entries
                .iter()
                .find(|(_, r)| r.template.as_str() == template)?;
            resource.completers.get(&request.argument).cloned()
        };
        Some(match completer {
            Some(completer) => completer.complete(request).await,
            None => Completion::default(),
        })
    }

    /// Announce that the contents of `uri` changed: subscribers of
    /// [`Resources::updates`] hear it (an MCP server sends its subscribed clients
    /// `notifications/resources/updated`).
    pub fn notify_updated(&self, uri: impl Into<String>) {
        let _ = self.updates.send(uri.into());
    }

    /// The URIs announced by [`Resources::notify_updated`] from now on.
    pub fn updates(&self) -> broadcast::Receiver<String> {
        self.updates.subscribe()
    }

    /// A counter that changes each time a resource is registered or unregistered.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }
}
