/**
 * The stages of one retrieval, timed once and reported twice: to the latency histogram
 * (`strata_retrieval_stage_seconds{stage}`) and, with tracing on, as `retrieval.<stage>` spans under the
 * active `retrieval` span. The asynchronous stages (index_load, embed, pending) are timed around their
 * promises (index_load and embed overlap: they run together); the pipeline's synchronous stages
 * (search, fuse, arbitrate) report their ends through memory's `StageClock`.
 */
import { context, type Context } from '@opentelemetry/api';
import type { retrieval } from '@strata/memory';
import type { Metrics } from '../metrics';
import { nowMs, type Tracing } from './tracing';

export type Stage = 'index_load' | 'embed' | 'pending' | 'turn' | 'worker' | retrieval.RetrievalStage | 'records' | 'total';

export class RetrievalStages implements retrieval.StageClock {
  private readonly started = nowMs();
  private last = this.started;
  /** the context of the retrieval span, captured at creation (the pipeline's stages end outside any await) */
  private readonly parent: Context = context.active();

  constructor(private readonly metrics: Metrics | undefined, private readonly tracing: Tracing | undefined) {}

  /** Times an asynchronous stage (its time counts whether it succeeds or fails). */
  async time<T>(stage: Stage, run: () => Promise<T>): Promise<T> {
    const start = nowMs();
    try {
      return await run();
    } finally {
      this.report(stage, start, nowMs());
    }
  }

  /** Marks the start of the synchronous part (the pipeline). */
  mark(): void {
    this.last = nowMs();
  }

  /** StageClock: a pipeline stage ended; it began where the previous one ended. */
  end(stage: retrieval.RetrievalStage): void {
    const now = nowMs();
    this.report(stage, this.last, now);
    this.last = now;
  }

  /** A stage measured elsewhere (the index worker's pipeline stages), `ms` long, ending now. */
  add(stage: retrieval.RetrievalStage, ms: number): void {
    const end = nowMs();
    this.report(stage, end - ms, end);
  }

  /** The whole retrieval, from this object's creation. */
  finish(): void {
    this.metrics?.retrievalStage.observe({ stage: 'total' }, (nowMs() - this.started) / 1000);
  }

  private report(stage: Stage, start: number, end: number): void {
    this.metrics?.retrievalStage.observe({ stage }, (end - start) / 1000);
    this.tracing?.record(`retrieval.${stage}`, start, end, { 'strata.retrieval.stage': stage }, this.parent);
  }
}
