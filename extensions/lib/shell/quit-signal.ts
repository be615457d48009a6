// Why Pi 0.73's TUI needs a SIGTERM listener of ours to stop background jobs when it is ended by the signal.
// Its quit on SIGTERM removes its own listener as it begins and emits session_shutdown only after it has
// drained the terminal's input. proper-lockfile's `signal-exit`, which Pi loads, also listens: seeing itself
// alone on the signal during the same dispatch, it re-raises the signal, and Node dies of it before any
// extension hears of the quit, so the jobs outlive Pi. While another listener is there, signal-exit leaves the
// signal alone and Pi's quit runs to its end (session_shutdown, which stops the jobs, then its own exit). Pi 1.6
// keeps its listener until it has quit, so there this one changes nothing. It never stops a job itself: the
// jobs are stopped once, by session_shutdown, on a signal as on Ctrl+D.

/**
 * Listens for `signal` until the returned release is called (at the start of session_shutdown). A listener
 * makes Node ignore the signal's default action, so if no quit releases it within `fallbackMs` of the signal
 * (a host that does not quit on it), it steps aside and raises the signal again: the process then ends as it
 * would have without us, only later.
 */
export function keepSignalHandled(signal: NodeJS.Signals, fallbackMs = 5000): () => void {
	let fallback: NodeJS.Timeout | undefined;
	const release = () => {
		clearTimeout(fallback);
		process.off(signal, onSignal);
	};
	function onSignal(): void {
		fallback ??= setTimeout(() => {
			release();
			process.kill(process.pid, signal);
		}, fallbackMs).unref();
	}
	process.on(signal, onSignal);
	return release;
}
