import { Router } from 'express';
import { AppError } from '@repo/errors';
import type { Logger } from '@repo/service';
import type { AddressBook } from '../address-book';
import { parseBtcAmount, satsToBtc } from '../amount';
import { LABEL_MAX_LENGTH } from '../config';
import type { LabelRecord, Store } from '../store';

/** Dependencies of {@link createAddressRouter}. */
export interface AddressRouterDeps {
  store: Store;
  book: AddressBook;
  logger: Logger;
  /** Labels handed out at most (MAX_LABELS). */
  maxLabels: number;
}

function invalid(message: string, details?: string): AppError {
  return new AppError('INVALID_REQUEST', { message, details });
}

/**
 * Control (Cc: C0, DEL, C1 with U+0085) and format (Cf: bidi overrides and isolates, zero-width
 * characters, BOM) characters, and the line and paragraph separators: a label is shown to people
 * and written to logs, where these hide or reorder text.
 */
const FORBIDDEN_IN_LABEL = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

/** A lone surrogate (invalid UTF-16, not encodable as UTF-8). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Checks `label`: a non-empty string of at most LABEL_MAX_LENGTH characters, valid UTF-16, no control or format characters. */
export function parseLabel(value: unknown): string {
  if (value === undefined) throw new AppError('MISSING_PARAMETER', { message: 'label is required', details: 'a non-empty string' });
  if (typeof value !== 'string') throw invalid('label must be a string');
  if (value.trim() === '') throw invalid('label must not be empty');
  if ([...value].length > LABEL_MAX_LENGTH) throw invalid(`label must be at most ${LABEL_MAX_LENGTH} characters`);
  if (LONE_SURROGATE.test(value)) throw invalid('label must be valid Unicode', 'a lone surrogate (\\ud800 to \\udfff) is not a character');
  const bad = FORBIDDEN_IN_LABEL.exec(value);
  if (bad !== null) {
    const code = `U+${bad[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
    throw invalid('label must not contain control or format characters', `${code} at index ${bad.index}`);
  }
  return value;
}

function toResponse(record: LabelRecord) {
  return { address: record.address, label: record.label, amount: satsToBtc(record.amountSats), created_at: record.createdAt };
}

/**
 * docs/silent-payments.md, "POST /generate-address": `{label, amount}` → `{address, label, amount, created_at}`.
 * The label maps to a BIP-352 label index m ≥ 1 (m = 0 is change); 201 when the label is new,
 * 200 with the stored record (its first amount and time) when it existed.
 */
export function createAddressRouter(options: AddressRouterDeps): Router {
  const { store, book, logger, maxLabels } = options;
  const router = Router();
  router.post('/generate-address', async function generateAddress(req, res) {
    const body: unknown = req.body;
    if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw invalid('body must be a JSON object', 'send Content-Type: application/json with {"label": string, "amount": number}');
    }
    const { label: rawLabel, amount: rawAmount } = body as { label?: unknown; amount?: unknown };
    const label = parseLabel(rawLabel);
    if (rawAmount === undefined)
      throw new AppError('MISSING_PARAMETER', { message: 'amount is required', details: 'a positive number of BTC' });
    const amount = parseBtcAmount(rawAmount);
    if (typeof amount === 'string') throw invalid(amount);
    const existing = await store.findLabel(label);
    if (existing !== undefined) {
      res.status(200).json(toResponse(existing));
      return;
    }
    // A documented cap (docs/silent-payments.md, "Limits"): every label is scanned for in every block.
    if ((await store.countLabels()) >= maxLabels) {
      throw new AppError('CONFLICT', {
        message: 'label limit reached',
        details: `this service hands out at most ${maxLabels} labels (MAX_LABELS); reuse an existing label`,
      });
    }
    const record = await store.createLabel(label, amount, (m) => book.labelAddress(m));
    book.addLabel(record.m, record.address);
    logger.info({ m: record.m, address: record.address }, 'address generated');
    res.status(201).json(toResponse(record));
  });
  return router;
}
