//! AbortSignal wiring. napi's own `AbortSignal` overwrites the user's
//! `onabort` and ignores a signal that is already aborted, so we read
//! `aborted` ourselves and subscribe with `addEventListener`.
//!
//! The listener is removed when the operation ends, so one long-lived signal
//! passed to many calls does not collect a listener per call. It is added
//! with `{ signal: ours }`, where `ours` is a private `AbortController`'s
//! signal: aborting that controller removes the listener, and a bound
//! `controller.abort` is a function of no arguments that a worker thread
//! can call through a threadsafe function.

use super::error::{coded_error, run_blocking};
use crate::error_code::CodedError;
use crate::search::{CancelToken, ErrorCode};
use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};

/// `signal.addEventListener(type, listener, { signal })`.
type AddEventListener<'a> = Function<'a, FnArgs<(String, Function<'a, (), ()>, Object<'a>)>, ()>;

/// The bound `controller.abort`; weak, so a pending call never keeps Node
/// alive.
type Remover = ThreadsafeFunction<(), (), (), Status, false, true>;

/// Removes the abort listener when dropped, from whichever thread the
/// operation ends on.
pub struct AbortSubscription {
    remove: Option<Remover>,
}

impl AbortSubscription {
    fn none() -> Self {
        AbortSubscription { remove: None }
    }
}

impl Drop for AbortSubscription {
    fn drop(&mut self) {
        if let Some(remove) = self.remove.take() {
            remove.call((), ThreadsafeFunctionCallMode::NonBlocking);
        }
    }
}

/// Throws `CANCELLED` for a signal that is already aborted: the operation
/// is not started at all.
pub fn check_not_aborted(env: &Env, signal: Option<&Object>) -> Result<()> {
    let Some(signal) = signal else {
        return Ok(());
    };
    let aborted: Option<bool> = signal.get_named_property("aborted").ok();
    if aborted == Some(true) {
        return Err(coded_error(
            env,
            ErrorCode::Cancelled,
            "AbortError: The operation was aborted",
        ));
    }
    Ok(())
}

/// Cancels `token` when `signal` aborts, until the returned subscription is
/// dropped.
pub fn subscribe(
    env: &Env,
    signal: Option<&Object>,
    token: &CancelToken,
) -> Result<AbortSubscription> {
    let Some(signal) = signal else {
        return Ok(AbortSubscription::none());
    };
    let add: AddEventListener = signal.get_named_property("addEventListener").map_err(|_| {
        coded_error(
            env,
            ErrorCode::InvalidOption,
            "signal must be an AbortSignal",
        )
    })?;
    let token = token.clone();
    let listener = env.create_function_from_closure::<(), (), _>("onabort", move |_ctx| {
        token.cancel();
        Ok(())
    })?;
    let controller_class: Function<(), Unknown> =
        env.get_global()?.get_named_property("AbortController")?;
    let controller = controller_class.new_instance(())?.coerce_to_object()?;
    let abort: Function<(), ()> = controller.get_named_property("abort")?;
    let remove: Remover = abort
        .bind(controller)?
        .build_threadsafe_function::<()>()
        .callee_handled::<false>()
        .weak::<true>()
        .build()?;
    let mut listen_options = Object::new(env)?;
    let ours: Object = controller.get_named_property("signal")?;
    listen_options.set_named_property("signal", ours)?;
    add.apply(
        signal,
        FnArgs::from(("abort".to_string(), listener, listen_options)),
    )?;
    Ok(AbortSubscription {
        remove: Some(remove),
    })
}

/// [`run_blocking`] for work that `signal` may cancel through `cancel`: the
/// abort listener is added now and removed as soon as the work ends, so one
/// long-lived signal collects no listener per call.
pub fn run_cancellable<'env, T, R>(
    env: &'env Env,
    what: &'static str,
    signal: Option<&Object>,
    cancel: &CancelToken,
    work: impl FnOnce(&CancelToken) -> std::result::Result<T, CodedError> + Send + 'static,
    out: impl FnOnce(T) -> R + Send + 'static,
) -> Result<PromiseRaw<'env, R>>
where
    T: Send + 'static,
    R: ToNapiValue + Send + 'static,
{
    let subscription = subscribe(env, signal, cancel)?;
    let cancel = cancel.clone();
    run_blocking(
        env,
        what,
        move || {
            let result = work(&cancel);
            drop(subscription);
            result
        },
        out,
    )
}
