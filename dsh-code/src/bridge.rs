//! The `tools.<name>(args)` bridge: numbering, scheduling and ordered delivery of a
//! run's tool calls.
//!
//! Everything here lives on the run's thread. A call enters from the program (the host
//! function `call` parses the snapshotted arguments and [`Bridge::submit`]s it), waits
//! in the queue, is started in submission order when the concurrency rule allows it, and
//! runs through [`Registry::execute`]. The bridge owns the started futures and polls them
//! itself (never inside the engine), so it can keep driving them after the program has
//! stopped: settlement cancels them through the run's token and waits for each to end.
//!
//! - Consecutive parallel-safe calls overlap, at most `cap` at a time. Their policy
//!   stages (pre-execute, approval, guards) run one call at a time in submission order,
//!   and so do their closing stages (post-execute, finalize, observers): each call runs
//!   through [`Registry::execute_ordered`] with the run's [`CallOrder`].
//! - An exclusive call starts only when nothing is running, and nothing starts while it
//!   runs (its post-execute included, which is part of `execute`).
//! - The mode of the call at the head of the queue is read when it is about to start,
//!   unless nothing runs and nothing else waits: it then starts at once, and its mode is
//!   read when another call wants to start while it still runs (so a program that awaits
//!   each call costs no classification).
//! - Results are delivered in submission order: a call that finished early waits for
//!   the calls submitted before it.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use dsh_runtime::ApprovalRoute;
use dsh_runtime::ParentCall;
use dsh_runtime::caller::{CallerRoute, with_caller};
use dsh_runtime::hooks::with_approval;
use dsh_runtime::json::{SharedValue, Value};
use dsh_runtime::{
    AgentScopeId, Arguments, CallOrder, ExecutionId, ExecutionMode, Registry, ToolCall, ToolResult,
    content::ContentBlock,
};

use crate::events::{SubCall, SubCallObserver};
use tokio_util::sync::CancellationToken;

/// What a call resolves to in the program: its value, or the message it rejects with.
/// A settled sub-call: `Ok` holds a successful result (it has a value), `Err` a
/// failure's message.
pub(crate) type Reply = Result<ToolResult, String>;

/// Replies routed to the engine, tagged with the engine's id for the call, in the order
/// they were given.
pub(crate) type Outbox = RefCell<VecDeque<(i32, Reply)>>;

/// Where a call's reply lands: kept until taken, or routed to an [`Outbox`].
#[derive(Default)]
pub(crate) struct Slot {
    reply: RefCell<Option<Reply>>,
    waker: RefCell<Option<Waker>>,
    route: RefCell<Option<(Rc<Outbox>, i32)>>,
}

impl Slot {
    fn fill(&self, reply: Reply) {
        match self.route.borrow_mut().take() {
            Some((outbox, id)) => outbox.borrow_mut().push_back((id, reply)),
            None => *self.reply.borrow_mut() = Some(reply),
        }
        if let Some(w) = self.waker.borrow_mut().take() {
            w.wake();
        }
    }

    /// The reply if it is already there; otherwise it will be pushed to `outbox` as
    /// `(id, reply)` when it comes.
    pub(crate) fn route(&self, outbox: &Rc<Outbox>, id: i32) -> Option<Reply> {
        if let Some(reply) = self.reply.borrow_mut().take() {
            return Some(reply);
        }
        *self.route.borrow_mut() = Some((outbox.clone(), id));
        None
    }

    /// Wait for the reply (the engine routes replies instead; see [`Slot::route`]).
    #[cfg(test)]
    pub(crate) fn wait(self: Rc<Self>) -> impl Future<Output = Reply> {
        std::future::poll_fn(move |cx| {
            if let Some(reply) = self.reply.borrow_mut().take() {
                return Poll::Ready(reply);
            }
            *self.waker.borrow_mut() = Some(cx.waker().clone());
            Poll::Pending
        })
    }
}

/// The identity every sub-call inherits from the outer `run_code` execution.
pub(crate) struct Outer {
    pub(crate) call_id: Arc<str>,
    pub(crate) root_call_id: Arc<str>,
    pub(crate) agent: Option<AgentScopeId>,
    pub(crate) token: ExecutionId,
    /// The outer call, named by every sub-call as the call it was made for.
    pub(crate) parent: Arc<ParentCall>,
    /// The fallback approval handler around the outer call (an MCP session's client):
    /// installed around every sub-call, which runs on the run's thread, so that its
    /// `ask` reaches the same user while the program waits.
    pub(crate) approval: Option<ApprovalRoute>,
    /// The caller handler around the outer call (an MCP session's client, a host's own):
    /// installed around every sub-call the same way, so that what a sub-call asks of
    /// its caller (a form, a sampling request, its roots, its logs) reaches the same
    /// caller while the program waits.
    pub(crate) caller: Option<CallerRoute>,
    /// Told when calls start and settle (only for calls with an agent).
    pub(crate) observer: Option<Arc<dyn SubCallObserver>>,
}

struct Queued {
    name: Arc<str>,
    call: ToolCall,
    slot: Rc<Slot>,
}

type LocalFuture = Pin<Box<dyn Future<Output = ToolResult>>>;

struct Started {
    /// Whether the call runs alone; `None` until classified (a call that started alone
    /// is classified only if another call wants to start while it runs).
    exclusive: Option<bool>,
    /// What to classify the call by (its arguments), while `exclusive` is `None`.
    twin: Option<SharedValue>,
    name: Arc<str>,
    future: Option<LocalFuture>,
    result: Option<ToolResult>,
    slot: Rc<Slot>,
    /// For the settle event: the name and the call id (kept only with an observer).
    event: Option<(Arc<str>, Arc<str>)>,
}

/// What delivered sub-call results forward to the outer call, in dispatch order.
#[derive(Default, Debug)]
pub(crate) struct Forwarded {
    pub(crate) contexts: Vec<String>,
    pub(crate) concludes_turn: bool,
    /// The content of every successful call whose content holds an image.
    pub(crate) content: Vec<ContentBlock>,
}

/// One run's bridge.
pub(crate) struct Bridge {
    registry: Registry,
    outer: Outer,
    /// Cancelled when the outer call is, and when the run settles.
    run_token: CancellationToken,
    cap: usize,
    /// Orders the policy and closing stages of the started calls.
    order: CallOrder,
    /// What every call shares: the run's token, the outer call's token as parent, its
    /// root call id and agent.
    template: ToolCall,
    submitted: Cell<u64>,
    queue: RefCell<VecDeque<Queued>>,
    started: RefCell<VecDeque<Started>>,
    running: Cell<usize>,
    exclusive_running: Cell<bool>,
    over: RefCell<Option<String>>,
    forwarded: RefCell<Forwarded>,
    waker: RefCell<Option<Waker>>,
}

impl Bridge {
    pub(crate) fn new(
        registry: Registry,
        outer: Outer,
        run_token: CancellationToken,
        cap: usize,
    ) -> Bridge {
        let mut template = ToolCall::new("", "", Value::Null)
            .with_cancellation(run_token.clone())
            .with_parent(outer.token)
            .with_parent_call(outer.parent.clone())
            .with_root_call_id(outer.root_call_id.clone());
        if let Some(agent) = outer.agent {
            template = template.with_agent(agent);
        }
        Bridge {
            registry,
            template,
            outer,
            run_token,
            cap: cap.max(1),
            order: CallOrder::new(),
            submitted: Cell::new(0),
            queue: RefCell::default(),
            started: RefCell::default(),
            running: Cell::new(0),
            exclusive_running: Cell::new(false),
            over: RefCell::default(),
            forwarded: RefCell::default(),
            waker: RefCell::default(),
        }
    }

    /// How many calls were numbered so far.
    pub(crate) fn submitted(&self) -> u64 {
        self.submitted.get()
    }

    /// Number and queue a call whose arguments passed the snapshot; its reply arrives in
    /// the returned slot.
    pub(crate) fn submit(&self, name: &Arc<str>, arguments: Value) -> Rc<Slot> {
        let slot = Rc::new(Slot::default());
        if let Some(reason) = self.over.borrow().as_deref() {
            slot.fill(Err(format!(
                "run_code run is over ({reason}); {name} not dispatched"
            )));
            return slot;
        }
        let n = self.submitted.get() + 1;
        self.submitted.set(n);
        let mut call_id = String::with_capacity(self.outer.call_id.len() + 26);
        call_id.push_str(&self.outer.call_id);
        call_id.push_str(":code:");
        push_decimal(&mut call_id, n);
        // From the template: no cancellation token made and dropped per call.
        let call = self
            .template
            .clone()
            .with_call_id(call_id)
            .with_name(name.clone())
            .with_arguments(Arguments::Value(Arc::new(arguments)));
        self.queue.borrow_mut().push_back(Queued {
            name: name.clone(),
            call,
            slot: slot.clone(),
        });
        if let Some(w) = self.waker.borrow().as_ref() {
            w.wake_by_ref();
        }
        slot
    }

    /// Start what may start, poll what runs, deliver what is due. Returns whether
    /// anything was delivered (the program may be able to continue).
    pub(crate) fn poll(&self, cx: &mut Context<'_>) -> bool {
        {
            let mut w = self.waker.borrow_mut();
            if !w.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                *w = Some(cx.waker().clone());
            }
        }
        let mut delivered = false;
        loop {
            let started = self.start_ready();
            let finished = self.poll_running(cx);
            delivered |= self.deliver();
            if !started && !finished {
                return delivered;
            }
        }
    }

    fn start_ready(&self) -> bool {
        let mut any = false;
        loop {
            if self.over.borrow().is_some() || self.exclusive_running.get() {
                return any;
            }
            let queued = self.queue.borrow().len();
            if queued == 0 {
                return any;
            }
            let running = self.running.get();
            // A call that starts with nothing running and nothing queued behind it may
            // start whatever its mode: its classification waits until another call
            // wants to start while it runs (most awaited calls never need one).
            let alone = running == 0 && queued == 1;
            if running > 0 && self.classify_running() {
                return any;
            }
            let exclusive = match self.queue.borrow().front() {
                None => return any,
                Some(_) if alone => None,
                Some(head) => {
                    Some(self.registry.execution_mode(&head.call) == ExecutionMode::Exclusive)
                }
            };
            let may_start = match exclusive {
                None => true,
                Some(true) => running == 0,
                Some(false) => running < self.cap,
            };
            if !may_start {
                return any;
            }
            let Some(next) = self.queue.borrow_mut().pop_front() else {
                return any;
            };
            let call = next.call;
            let twin = match (&call.arguments(), exclusive) {
                (Arguments::Value(arguments), None) => Some(arguments.clone()),
                _ => None,
            };
            let event = match (&self.outer.observer, self.outer.agent, &call.arguments()) {
                (Some(observer), Some(agent), Arguments::Value(arguments)) => {
                    let sub = SubCall {
                        root_call_id: &self.outer.root_call_id,
                        parent_call_id: &self.outer.call_id,
                        call_id: call.call_id(),
                        name: &next.name,
                        agent,
                    };
                    crate::events::contained("started", || observer.started(&sub, arguments));
                    Some((next.name.clone(), Arc::<str>::from(call.call_id())))
                }
                _ => None,
            };
            // Policy and closing stages in start order, which is submission order.
            let execute = self.registry.execute_ordered(call, &self.order);
            let future: LocalFuture = match (&self.outer.approval, &self.outer.caller) {
                (None, None) => Box::pin(execute),
                (Some(approval), None) => Box::pin(with_approval(approval.clone(), execute)),
                (None, Some(caller)) => Box::pin(with_caller(caller.clone(), execute)),
                (Some(approval), Some(caller)) => Box::pin(with_approval(
                    approval.clone(),
                    with_caller(caller.clone(), execute),
                )),
            };
            self.started.borrow_mut().push_back(Started {
                exclusive,
                twin,
                name: next.name.clone(),
                future: Some(future),
                result: None,
                slot: next.slot,
                event,
            });
            self.running.set(running + 1);
            self.exclusive_running.set(exclusive == Some(true));
            any = true;
        }
    }

    /// Classify the running calls not classified yet; whether one of the running calls
    /// is exclusive (nothing may start beside it).
    fn classify_running(&self) -> bool {
        let mut started = self.started.borrow_mut();
        for s in started.iter_mut() {
            if s.future.is_none() {
                continue;
            }
            if s.exclusive.is_none() {
                let exclusive = match s.twin.take() {
                    Some(arguments) => {
                        let mut twin =
                            ToolCall::new("", s.name.clone(), Arguments::Value(arguments));
                        if let Some(agent) = self.outer.agent {
                            twin = twin.with_agent(agent);
                        }
                        self.registry.execution_mode(&twin) == ExecutionMode::Exclusive
                    }
                    None => true,
                };
                s.exclusive = Some(exclusive);
                if exclusive {
                    self.exclusive_running.set(true);
                }
            }
        }
        self.exclusive_running.get()
    }

    fn poll_running(&self, cx: &mut Context<'_>) -> bool {
        let mut any = false;
        let mut started = self.started.borrow_mut();
        for s in started.iter_mut() {
            let Some(future) = s.future.as_mut() else {
                continue;
            };
            if let Poll::Ready(result) = future.as_mut().poll(cx) {
                s.future = None;
                s.result = Some(result);
                self.running.set(self.running.get() - 1);
                s.twin = None;
                if s.exclusive == Some(true) {
                    self.exclusive_running.set(false);
                }
                any = true;
            }
        }
        any
    }

    fn deliver(&self) -> bool {
        let mut any = false;
        loop {
            let done = {
                let mut started = self.started.borrow_mut();
                match started.front() {
                    Some(s) if s.result.is_some() => started.pop_front(),
                    _ => None,
                }
            };
            let Some(Started {
                result: Some(result),
                slot,
                event,
                ..
            }) = done
            else {
                return any;
            };
            if self.over.borrow().is_none() {
                self.forward(&result);
            }
            if let (Some((name, call_id)), Some(observer), Some(agent)) =
                (event, &self.outer.observer, self.outer.agent)
            {
                let call = SubCall {
                    root_call_id: &self.outer.root_call_id,
                    parent_call_id: &self.outer.call_id,
                    call_id: &call_id,
                    name: &name,
                    agent,
                };
                crate::events::contained("settled", || observer.settled(&call, &result));
            }
            slot.fill(reply(&result));
            any = true;
        }
    }

    fn forward(&self, result: &ToolResult) {
        let mut f = self.forwarded.borrow_mut();
        f.contexts.extend(result.contexts().iter().cloned());
        f.concludes_turn |= result.concludes_turn();
        if result.is_success()
            && result
                .content()
                .iter()
                .any(|b| matches!(b, ContentBlock::Image { .. }))
        {
            f.content.extend(result.content().iter().cloned());
        }
    }

    /// The run is over: cancel what runs, abandon what waits. Call [`Bridge::drain`]
    /// next.
    pub(crate) fn settle(&self, reason: &str) {
        if self.over.borrow().is_some() {
            return;
        }
        *self.over.borrow_mut() = Some(reason.to_string());
        self.run_token.cancel();
        let abandoned: Vec<Queued> = self.queue.borrow_mut().drain(..).collect();
        for q in abandoned {
            q.slot.fill(Err(format!(
                "run_code run is over ({reason}); {} tool call abandoned",
                q.name
            )));
        }
    }

    /// Wait until every started call has ended (their results are discarded).
    pub(crate) async fn drain(&self) {
        std::future::poll_fn(|cx| {
            self.poll(cx);
            if self.running.get() == 0 {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await
    }

    /// What delivered results forwarded.
    pub(crate) fn take_forwarded(&self) -> Forwarded {
        std::mem::take(&mut *self.forwarded.borrow_mut())
    }
}

/// Append `n` in decimal (what `format!` does, without its machinery: this is on every
/// call's path).
fn push_decimal(out: &mut String, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &d in &digits[start..] {
        out.push(char::from(d));
    }
}

fn reply(result: &ToolResult) -> Reply {
    match result.value() {
        Some(_) => Ok(result.clone()),
        None => Err(result.message().unwrap_or_default().to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_are_written_as_format_writes_them() {
        for n in [0, 7, 10, 99, 1000, 123_456_789, u64::MAX] {
            let mut s = String::from("x:");
            push_decimal(&mut s, n);
            assert_eq!(s, format!("x:{n}"));
        }
    }
    use dsh_runtime::{ToolContext, tool};

    /// Wait until cancelled.
    #[tool]
    async fn hold(cx: ToolContext) -> bool {
        cx.cancellation().cancelled().await;
        true
    }

    fn empty() -> Value {
        Value::Object(Default::default())
    }

    #[tokio::test]
    async fn settlement_abandons_queued_calls_and_refuses_late_ones() {
        let registry = Registry::new();
        let _hold = registry.register(Hold).unwrap();
        let bridge = Bridge::new(
            registry,
            Outer {
                call_id: "run".into(),
                root_call_id: "run".into(),
                agent: None,
                token: ExecutionId::mint(),
                parent: Arc::new(ParentCall::new("run_code", "run")),
                approval: None,
                caller: None,
                observer: None,
            },
            CancellationToken::new(),
            10,
        );
        let hold: Arc<str> = Arc::from("hold");
        let first = bridge.submit(&hold, empty());
        let second = bridge.submit(&hold, empty());
        std::future::poll_fn(|cx| {
            bridge.poll(cx);
            Poll::Ready(())
        })
        .await;
        // `hold` is exclusive: the first runs, the second waits.
        assert_eq!(bridge.running.get(), 1);
        bridge.settle("run_code settled");
        bridge.drain().await;
        assert_eq!(
            second.wait().await.err().as_deref(),
            Some("run_code run is over (run_code settled); hold tool call abandoned")
        );
        // The running call saw the run's token cancelled and ended as aborted.
        assert_eq!(
            first.wait().await.err().as_deref(),
            Some("tool call aborted")
        );
        let late = bridge.submit(&hold, empty());
        assert_eq!(
            late.wait().await.err().as_deref(),
            Some("run_code run is over (run_code settled); hold not dispatched")
        );
        assert_eq!(bridge.submitted(), 2);
    }
}
