/**
 * The well-behaved agent behind the SDK upstream: an @a2a-js/sdk 1.3
 * AgentExecutor whose behaviour is chosen by the first word of the user's
 * text, so a test says what it wants in the message itself:
 *
 *   (anything else)  one agent Message: "echo: <text>"
 *   task ...         Task SUBMITTED → WORKING → artifact → WORKING → COMPLETED
 *   wait ...         Task SUBMITTED → WORKING, then waits until CancelTask (or upstream close)
 *   fail ...         Task SUBMITTED, then the executor throws (the SDK reports FAILED)
 */
import { Role, TaskState, type Message, type Part, type TaskStatus } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server';
import { delay } from './servers.js';

export type AgentMode = 'echo' | 'task' | 'wait' | 'fail';

export const ARTIFACT_TEXT = 'artifact from the SDK upstream';

export function modeOf(text: string): AgentMode {
  const first = text.trimStart().split(/\s/, 1)[0]?.toLowerCase();
  return first === 'task' || first === 'wait' || first === 'fail' ? first : 'echo';
}

export function textPart(text: string): Part {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

export function textOf(message: Message | undefined): string {
  return (message?.parts ?? [])
    .map((p) => (p.content?.$case === 'text' ? p.content.value : ''))
    .join('');
}

function agentMessage(text: string, contextId: string, taskId = ''): Message {
  return {
    messageId: `agent-${Math.random().toString(36).slice(2)}`,
    contextId,
    taskId,
    role: Role.ROLE_AGENT,
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

const statusOf = (state: TaskState, text: string, contextId: string, taskId: string): TaskStatus => ({
  state,
  message: agentMessage(text, contextId, taskId),
  timestamp: new Date().toISOString(),
});

interface Waiting {
  readonly contextId: string;
  readonly release: () => void;
}

export class TestAgentExecutor implements AgentExecutor {
  private readonly waiting = new Map<string, Waiting>();

  /** @param stepDelayMs pause between a `task` run's events, so a stream is observably incremental. */
  constructor(private readonly stepDelayMs = 0) {}

  execute = async (ctx: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const text = textOf(ctx.userMessage);
    const mode = modeOf(text);
    const { taskId, contextId } = ctx;
    if (mode === 'echo') {
      bus.publish(AgentEvent.message(agentMessage(`echo: ${text}`, contextId)));
      bus.finished();
      return;
    }
    bus.publish(
      AgentEvent.task({
        id: taskId,
        contextId,
        status: statusOf(TaskState.TASK_STATE_SUBMITTED, 'submitted', contextId, taskId),
        artifacts: [],
        history: [ctx.userMessage],
        metadata: undefined,
      }),
    );
    if (mode === 'fail') throw new Error('the test agent failed on purpose');
    const update = (state: TaskState, note: string): void =>
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: statusOf(state, note, contextId, taskId), metadata: undefined }));
    update(TaskState.TASK_STATE_WORKING, 'working');
    if (mode === 'wait') {
      // CancelTask publishes the final state; this only keeps the execution alive until then.
      await new Promise<void>((release) => this.waiting.set(taskId, { contextId, release }));
      return;
    }
    await delay(this.stepDelayMs);
    bus.publish(
      AgentEvent.artifactUpdate({
        taskId,
        contextId,
        artifact: { artifactId: 'result', name: 'result', description: '', parts: [textPart(ARTIFACT_TEXT)], metadata: undefined, extensions: [] },
        append: false,
        lastChunk: true,
        metadata: undefined,
      }),
    );
    await delay(this.stepDelayMs);
    update(TaskState.TASK_STATE_WORKING, 'almost done');
    await delay(this.stepDelayMs);
    update(TaskState.TASK_STATE_COMPLETED, `done: ${text}`);
    bus.finished();
  };

  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    const waiting = this.waiting.get(taskId);
    this.waiting.delete(taskId);
    const contextId = waiting?.contextId ?? '';
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: statusOf(TaskState.TASK_STATE_CANCELED, 'canceled', contextId, taskId),
        metadata: undefined,
      }),
    );
    bus.finished();
    waiting?.release();
  };

  /** Lets every `wait` execution return, so closing the upstream leaves nothing pending. */
  releaseAll(): void {
    for (const w of this.waiting.values()) w.release();
    this.waiting.clear();
  }
}
