// Pi 1.6's bash contract for programmatic callers (codemode scripts): the tool declares an `outputSchema` and
// a `constrainedSampling` request, and every result carries a `structuredContent` of that shape. Our bash
// declares what the host's bash declares, with one change the background needs: `exit_code` may be null (the
// command runs on as a job) and `background_job_id` names that job. A host without the contract (Pi 0.73)
// gets neither, and no result carries structured content. Pure: the schema object comes from the host.

/** What a result of ours says to a script, in the host's field names. */
export interface BashStructured {
	output: string;
	truncated: boolean;
	full_output_path?: string;
	exit_code: number | null;
	wall_time_seconds: number;
	background_job_id?: string;
}

type Schema = Record<string | symbol, unknown> & { properties?: Record<string, unknown> };

/**
 * The host bash's `outputSchema` and `constrainedSampling`, with `exit_code` widened to number-or-null and an
 * optional `background_job_id`. `nullable(s)` builds "s or null" in the host's schema library.
 */
export function bashContract(
	base: object,
	nullable: (schema: unknown, description: string) => unknown,
	optionalString: (description: string) => unknown,
): { outputSchema: Schema; constrainedSampling?: unknown } | undefined {
	const host = base as { outputSchema?: Schema; constrainedSampling?: unknown };
	if (!host.outputSchema) return undefined;
	const props = host.outputSchema.properties;
	const outputSchema: Schema = props?.exit_code
		? {
				...host.outputSchema,
				properties: {
					...props,
					exit_code: nullable(props.exit_code, "Exit code; null when the command runs on in the background (see background_job_id)"),
					background_job_id: optionalString("The background job the command runs as, when it did not finish in the call"),
				},
			}
		: host.outputSchema;
	return { outputSchema, ...(host.constrainedSampling !== undefined ? { constrainedSampling: host.constrainedSampling } : {}) };
}

/** The structured content of a result we wrote ourselves (a start, a move, a command that left processes). */
export function structuredResult(o: {
	text: string;
	exitCode: number | null;
	startedAt: number;
	jobId?: string;
	from?: Partial<BashStructured>;
}): BashStructured {
	return {
		output: o.text,
		truncated: o.from?.truncated ?? false,
		...(o.from?.full_output_path ? { full_output_path: o.from.full_output_path } : {}),
		exit_code: o.exitCode,
		wall_time_seconds: o.from?.wall_time_seconds ?? Math.round((performance.now() - o.startedAt) / 100) / 10,
		...(o.jobId ? { background_job_id: o.jobId } : {}),
	};
}
