/**
 * @module What an assistant message held when its stream was cut (spec 2 cancellation table): the text,
 * thinking and tool_use blocks seen so far, so a cancelled turn can publish `tool.use_end` for each open
 * tool_use and `message.complete` with stop_reason `cancelled` and the partial final_content.
 */
import type { ContentBlock } from '../../canonical/message.ts';
import type { ReasoningFormat } from '../../canonical/reasoning-origin.ts';
import { type CanonicalStreamEvent, parseToolInput, type ToolUseEndEvent } from '../../canonical/stream.ts';

export interface PartialMessage {
  /** Feeds one canonical event of the stream. */
  push(e: CanonicalStreamEvent): void;
  /** tool.use_end events for the tool_use blocks that were opened and never ended. */
  closeOpenToolUses(messageId: string): ToolUseEndEvent[];
  /** The blocks seen so far, in index order (tool inputs as far as they parse). */
  content(): ContentBlock[];
}

export function createPartialMessage(): PartialMessage {
  const blocks = new Map<number, Draft>();
  // blocks that arrive whole (redacted thinking), as they arrived
  const whole = new Map<number, ContentBlock>();
  const draft = (index: number, make: () => Draft) => {
    let d = blocks.get(index);
    if (!d) {
      d = make();
      blocks.set(index, d);
    }
    return d;
  };
  return {
    push(e) {
      switch (e.type) {
        case 'text.delta':
          // a delta with no text (a citation's) makes no block: an empty text block is refused on replay
          if (e.text !== '') draft(e.content_block_index, () => ({ kind: 'text', text: '' })).text += e.text;
          break;
        case 'thinking.delta': {
          if (e.redacted_data !== undefined) {
            const origin = e.origin ? { origin: e.origin } : {};
            whole.set(e.content_block_index, { type: 'redacted_thinking', data: e.redacted_data, ...origin });
            break;
          }
          const d = draft(e.content_block_index, () => ({ kind: 'thinking', text: '', signature: null }));
          d.text += e.text;
          if (e.signature !== null && d.kind === 'thinking') d.signature = e.signature;
          if (e.origin && d.kind === 'thinking') d.origin = e.origin;
          break;
        }
        case 'tool.use_start':
          blocks.set(e.content_block_index, {
            kind: 'tool',
            id: e.tool_use_id,
            name: e.tool_name,
            text: '',
            input: null,
          });
          break;
        case 'tool.use_input_delta':
          draft(e.content_block_index, () => ({
            kind: 'tool',
            id: e.tool_use_id,
            name: '',
            text: '',
            input: null,
          })).text += e.partial_json;
          break;
        case 'tool.use_end': {
          const d = blocks.get(e.content_block_index);
          if (d?.kind !== 'tool') break;
          d.input = e.final_input;
          d.text = ''; // the fragments are not needed once the input is whole (a 20 MB write held them twice)
          break;
        }
      }
    },
    closeOpenToolUses(messageId) {
      const out: ToolUseEndEvent[] = [];
      for (const [index, d] of [...blocks].sort((a, b) => a[0] - b[0])) {
        if (d.kind !== 'tool' || d.input !== null) continue;
        d.input = partialInput(d.text);
        out.push({
          type: 'tool.use_end',
          message_id: messageId,
          content_block_index: index,
          tool_use_id: d.id,
          final_input: d.input,
        });
      }
      return out;
    },
    content() {
      const drafted = [...blocks].map(([index, d]): [number, ContentBlock] => {
        if (d.kind === 'text') return [index, { type: 'text', text: d.text }];
        if (d.kind === 'thinking')
          return [
            index,
            {
              type: 'thinking',
              thinking: d.text,
              signature: d.signature,
              ...(d.origin ? { origin: d.origin } : {}),
            },
          ];
        return [index, { type: 'tool_use', id: d.id, name: d.name, input: d.input ?? partialInput(d.text) }];
      });
      return [...drafted, ...whole].sort((a, b) => a[0] - b[0]).map(([, b]) => b);
    },
  };
}

// --- internal ---

type Draft =
  | { kind: 'text'; text: string }
  | { kind: 'thinking'; text: string; signature: string | null; origin?: ReasoningFormat }
  | { kind: 'tool'; id: string; name: string; text: string; input: Record<string, unknown> | null };

/** spec 2: final_input of a cut tool_use is what parses, or an empty object. */
function partialInput(text: string): Record<string, unknown> {
  const parsed = parseToolInput(text);
  return '_raw_arguments' in parsed ? {} : parsed;
}
