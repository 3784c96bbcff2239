/**
 * Response types from the generated OpenAPI schema, with a hand-typed fallback (`contract.ts`) for a
 * route the schema does not have yet or describes only loosely (a route without a response model).
 */

import type { paths } from "./schema";

type Method = "get" | "post" | "put" | "patch" | "delete";
type JsonOf<R> = R extends { content: { "application/json": infer B } } ? B : never;
type Success<R> = R extends { 200: infer X }
  ? JsonOf<X>
  : R extends { 201: infer X }
    ? JsonOf<X>
    : R extends { 202: infer X }
      ? JsonOf<X>
      : never;
// `unknown`, `never`, or a free-form object (`dict[str, Any]` in FastAPI, no response model).
type IsLoose<T> = unknown extends T ? true : [T] extends [never] ? true : string extends keyof T ? true : false;

/** The JSON body of a successful `method` on `path`, or `Fallback` while the schema lacks it. */
export type ResponseOf<P extends string, M extends Method, Fallback> = P extends keyof paths
  ? paths[P] extends { [K in M]: { responses: infer R } }
    ? IsLoose<Success<R>> extends true
      ? Fallback
      : Success<R>
    : Fallback
  : Fallback;
