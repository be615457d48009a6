//! AbortSignal wiring. napi's own `AbortSignal` overwrites the user's
//! `onabort` and ignores a signal that is already aborted, so we read
//! `aborted` ourselves and subscribe with `addEventListener`.

use crate::search::CancelToken;
use napi::bindgen_prelude::*;

/// `signal.addEventListener(type, listener)`.
type AddEventListener<'a> = Function<'a, FnArgs<(String, Function<'a, (), ()>)>, ()>;

pub fn check_and_subscribe(env: &Env, signal: Option<&Object>, token: &CancelToken) -> Result<()> {
    let Some(signal) = signal else {
        return Ok(());
    };
    let aborted: Option<bool> = signal.get_named_property("aborted").ok();
    if aborted == Some(true) {
        return Err(Error::new(
            Status::Cancelled,
            "AbortError: The operation was aborted".to_string(),
        ));
    }
    let add: AddEventListener = match signal.get_named_property("addEventListener") {
        Ok(f) => f,
        Err(_) => {
            return Err(Error::new(
                Status::InvalidArg,
                "signal must be an AbortSignal".to_string(),
            ))
        }
    };
    let token = token.clone();
    let listener = env.create_function_from_closure::<(), (), _>("onabort", move |_ctx| {
        token.cancel();
        Ok(())
    })?;
    add.apply(signal, FnArgs::from(("abort".to_string(), listener)))?;
    Ok(())
}
