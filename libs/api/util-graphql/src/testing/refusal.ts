import { expect } from 'vitest';
import { AppError } from '@ccos/shared/domain';

/** What a refusal tells the client: its API code, the field it names (if any), and its problem's or message's code. */
export async function refusalOf(call: Promise<unknown>): Promise<Record<string, unknown>> {
  const error = await call.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(AppError);
  const { code, field, problemCode, messageCode } = (error as AppError).extensions;
  return { code, ...(field === undefined ? {} : { field }), problemCode: problemCode ?? messageCode };
}
