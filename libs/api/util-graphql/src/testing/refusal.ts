import { expect } from 'vitest';
import { AppError } from '@ccos/shared/domain';

/** The AppError `call` rejects with (failing the test when it resolves or rejects with anything else). */
export async function appErrorOf(call: Promise<unknown>): Promise<AppError> {
  const error = await call.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

/** What a refusal tells the client: its API code, the field it names (if any), and its problem's or message's code. */
export async function refusalOf(call: Promise<unknown>): Promise<Record<string, unknown>> {
  const { code, field, problemCode, messageCode } = (await appErrorOf(call)).extensions;
  return { code, ...(field === undefined ? {} : { field }), problemCode: problemCode ?? messageCode };
}
