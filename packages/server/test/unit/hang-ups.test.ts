import 'reflect-metadata';
import { expect, it } from 'vitest';
import { isHangUp } from '../../src/app.js';

/** An error as Node's socket writes raise it (`write ECANCELED` on Node 24 when the client is gone). */
const socketError = (code: string, syscall: string) => Object.assign(new Error(`${syscall} ${code}`), { code, syscall });

it('takes every way a client hangs up for a hang-up, Node 24 ECANCELED included, and nothing else', () => {
  for (const code of ['ECONNRESET', 'ECONNABORTED', 'ECANCELED', 'EPIPE']) expect([code, isHangUp(socketError(code, 'write'))]).toEqual([code, true]);
  expect(isHangUp(Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }))).toBe(true);
  expect(isHangUp(new Error('something broke'))).toBe(false);
  expect(isHangUp(socketError('ENOSPC', 'write'))).toBe(false);
  // The database's connection resetting is a database failure, not the client's.
  expect(isHangUp(Object.assign(socketError('ECONNRESET', 'read'), { query: 'select 1', parameters: [] }))).toBe(false);
});
