import { hash } from "node:crypto";
import { LruCache } from "../lru.js";

interface Card {
  /** Settles when the card's last redraw asked for so far has ended. */
  tail: Promise<void>;
  /** The redraw asked for while another was in flight, not started yet. */
  waiting: { draw: () => Promise<void>; done: Promise<void> } | undefined;
}

/**
 * The redraws of each approval card in this process, one at a time. A redraw asked for while another is in
 * flight waits for it to end; those asked for while one waits are that one, drawn as the last of them asked:
 * each draw reads its request when it starts, so the one waiting covers every move announced before it.
 * So Slack never gets an older drawing of a card from here after a newer one.
 */
export class CardRedraws {
  readonly #cards = new Map<string, Card>();
  /**
   * What this process last sent for each recent card: the same drawing again (two moves' observers reading
   * one state) is not sent twice. Another replica that lands an older drawing after it reads again and
   * redraws (updateCard), so this memory never leaves a stale card. Kept as a SHA-256 digest of the
   * drawing: a card's drawing is about 3 KB, so 2,000 of them were 6 MiB of heap for a yes or no.
   */
  readonly #sent = new LruCache<string, string>(2_000);

  /** Whether `drawing` is what this process last sent for the card. */
  alreadySent(cardId: string, drawing: string): boolean {
    return this.#sent.get(cardId) === digest(drawing);
  }

  sentNow(cardId: string, drawing: string): void {
    this.#sent.set(cardId, digest(drawing));
  }

  redraw(cardId: string, draw: () => Promise<void>): Promise<void> {
    let card = this.#cards.get(cardId);
    if (!card) {
      card = { tail: Promise.resolve(), waiting: undefined };
      this.#cards.set(cardId, card);
    }
    if (card.waiting) {
      card.waiting.draw = draw;
      return card.waiting.done;
    }
    const c = card;
    const waiting: NonNullable<Card["waiting"]> = { draw, done: Promise.resolve() };
    waiting.done = c.tail.then(() => {
      c.waiting = undefined;
      return waiting.draw();
    });
    c.waiting = waiting;
    const tail = waiting.done.catch(() => undefined);
    c.tail = tail;
    void tail.then(() => {
      if (c.tail === tail) this.#cards.delete(cardId);
    });
    return waiting.done;
  }

  /** Cards with a redraw in flight or waiting. */
  get size(): number {
    return this.#cards.size;
  }
}

const digest = (drawing: string): string => hash("sha256", drawing, "base64url");
