/** The HTTP answer a call's value came from: its status and headers (its body is the value). */
export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
}

/** A call's value beside the response it came from. */
export interface WithResponse<T> {
  data: T;
  response: RawResponse;
}

/**
 * What the SDK's calls answer: a promise of the value that can also give the raw response beside it,
 * `const { data, response } = await client.projects.create({ name }).withResponse()` (`response.headers` holds
 * `x-request-id`, `location`, `idempotent-replayed`…). Awaiting it as a plain promise gives the value alone.
 */
export class BandPromise<T> extends Promise<T> {
  // then/catch/finally answer plain promises: only the call's own promise knows its response.
  static override get [Symbol.species](): PromiseConstructor {
    return Promise;
  }

  private value: Promise<T> | undefined;

  private constructor(private readonly answer: Promise<WithResponse<T>>) {
    // The value is read from `answer` when asked for (then/catch/finally), so a caller who only asks for
    // withResponse() gets the one rejection, never a second unhandled one.
    super((resolve) => resolve(undefined as T));
  }

  /** Runs a call that answers its value and response. */
  static from<T>(call: () => Promise<WithResponse<T>>): BandPromise<T> {
    return new BandPromise(call());
  }

  /** The value and the response it came from. */
  withResponse(): Promise<WithResponse<T>> {
    return this.answer;
  }

  /** The same call with its value turned into another (the response stays the call's). */
  map<U>(turn: (data: T) => U | PromiseLike<U>): BandPromise<U> {
    return new BandPromise(this.answer.then(async ({ data, response }) => ({ data: await turn(data), response })));
  }

  // The reason is `any`, as in Promise's own declaration: `.catch((error) => error.code)` reads as it does on any promise.
  override then<A = T, B = never>(
    onfulfilled?: ((value: T) => A | PromiseLike<A>) | null,
    onrejected?: ((reason: any) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.data().then(onfulfilled, onrejected);
  }

  override catch<B = never>(onrejected?: ((reason: any) => B | PromiseLike<B>) | null): Promise<T | B> {
    return this.data().catch(onrejected);
  }

  override finally(onfinally?: (() => void) | null): Promise<T> {
    return this.data().finally(onfinally);
  }

  private data(): Promise<T> {
    this.value ??= this.answer.then(({ data }) => data);
    return this.value;
  }
}
