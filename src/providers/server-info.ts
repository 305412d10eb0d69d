// What an OpenAI-compatible server says about itself beyond the OpenAI API: which
// server it is, the models it has, whether a model is loaded, and the context window
// a model is served with. Each server says it in its own place:
//   Ollama     GET /api/version, GET /api/tags (models), POST /api/show (model_info
//              `<arch>.context_length`, `num_ctx` in parameters), GET /api/ps (loaded
//              models and their `context_length`, ollama/ollama#11331)
//   llama.cpp  GET /props (`default_generation_settings.n_ctx`, ggml-org/llama.cpp#5307)
//   vLLM       GET /v1/models (`max_model_len` per model)
//   LM Studio  GET /api/v0/models (`state`, `loaded_context_length`, `max_context_length`)
// Every probe is short and optional: a server that answers none is `unknown`, and
// ragline works with it as before.

export type ServerKind = 'openai' | 'ollama' | 'llama.cpp' | 'vllm' | 'lmstudio' | 'unknown';

export interface ModelInfo {
  kind: ServerKind;
  /** Model ids the server has, when it listed them. */
  models?: string[];
  /** The context window the model is (or will be) served with, in tokens, when the server says. */
  contextTokens?: number;
  /** Where `contextTokens` came from, in words. */
  contextSource?: string;
  /** False when the server says the model is not loaded yet (its first request will load it). */
  loaded?: boolean;
}

/** Ollama's context when neither the model nor the server sets one (4096 since 0.6.x; 2048 before). */
export const OLLAMA_DEFAULT_CONTEXT = 4096;
const PROBE_TIMEOUT_MS = 2500;

export function serverRoot(baseURL: string): string {
  return baseURL.replace(/\/+$/, '').replace(/\/v1$/, '');
}

export function isOpenAIHost(baseURL: string): boolean {
  return /^https:\/\/api\.openai\.com(\/|$)/.test(baseURL);
}

async function getJSON(url: string, apiKey: string | undefined, init: { method?: string; body?: unknown } = {}, signal?: AbortSignal): Promise<any> {
  const timeout = AbortSignal.timeout(PROBE_TIMEOUT_MS);
  try {
    const response = await fetch(url, {
      method: init.method ?? 'GET',
      headers: { ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}), ...(init.body ? { 'content-type': 'application/json' } : {}) },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      signal: signal ? AbortSignal.any([timeout, signal]) : timeout,
    });
    if (!response.ok) return undefined;
    return await response.json();
  } catch {
    return undefined;
  }
}

const kinds = new Map<string, Promise<ServerKind>>();

/** Which server is at `baseURL` (asked once per process). */
export function serverKind(baseURL: string, apiKey?: string): Promise<ServerKind> {
  if (isOpenAIHost(baseURL)) return Promise.resolve('openai');
  let known = kinds.get(baseURL);
  if (!known) {
    known = detect(baseURL, apiKey);
    kinds.set(baseURL, known);
  }
  return known;
}

async function detect(baseURL: string, apiKey: string | undefined): Promise<ServerKind> {
  const root = serverRoot(baseURL);
  const [ollama, props, lmstudio, models] = await Promise.all([
    getJSON(`${root}/api/version`, apiKey),
    getJSON(`${root}/props`, apiKey),
    getJSON(`${root}/api/v0/models`, apiKey),
    getJSON(`${baseURL.replace(/\/+$/, '')}/models`, apiKey),
  ]);
  if (typeof ollama?.version === 'string') return 'ollama';
  if (props && typeof props === 'object' && (props.default_generation_settings || 'n_ctx' in props)) return 'llama.cpp';
  if (Array.isArray(lmstudio?.data)) return 'lmstudio';
  if (Array.isArray(models?.data) && models.data.some((model: any) => model?.owned_by === 'vllm' || typeof model?.max_model_len === 'number')) return 'vllm';
  return 'unknown';
}

const sameModel = (a: string, b: string) => a === b || a === `${b}:latest` || b === `${a}:latest`;

/** What the server says about `model`: its list of models, the context window, whether it is loaded. */
export async function modelInfo(baseURL: string, apiKey: string | undefined, model: string, signal?: AbortSignal): Promise<ModelInfo> {
  const kind = await serverKind(baseURL, apiKey);
  const root = serverRoot(baseURL);
  if (kind === 'ollama') {
    const [tags, show, ps] = await Promise.all([
      getJSON(`${root}/api/tags`, apiKey, {}, signal),
      getJSON(`${root}/api/show`, apiKey, { method: 'POST', body: { model } }, signal),
      getJSON(`${root}/api/ps`, apiKey, {}, signal),
    ]);
    const models: string[] | undefined = Array.isArray(tags?.models) ? tags.models.map((entry: any) => String(entry.name ?? entry.model)) : undefined;
    const running = Array.isArray(ps?.models) ? ps.models.find((entry: any) => sameModel(String(entry.name ?? entry.model), model)) : undefined;
    const numCtx = Number(/(?:^|\n)\s*num_ctx\s+(\d+)/.exec(String(show?.parameters ?? ''))?.[1]);
    if (running && Number(running.context_length) > 0) {
      return { kind, models, loaded: true, contextTokens: Number(running.context_length), contextSource: 'Ollama /api/ps' };
    }
    if (numCtx > 0) return { kind, models, loaded: Boolean(running), contextTokens: numCtx, contextSource: "the model's num_ctx (Ollama /api/show)" };
    return {
      kind,
      models,
      loaded: Boolean(running),
      contextTokens: OLLAMA_DEFAULT_CONTEXT,
      contextSource: "Ollama's default; OLLAMA_CONTEXT_LENGTH on the server or RAGLINE_CONTEXT_TOKENS changes it",
    };
  }
  if (kind === 'llama.cpp') {
    const [props, list] = await Promise.all([getJSON(`${root}/props`, apiKey, {}, signal), getJSON(`${baseURL.replace(/\/+$/, '')}/models`, apiKey, {}, signal)]);
    const nCtx = Number(props?.default_generation_settings?.n_ctx ?? props?.n_ctx);
    return { kind, models: idsOf(list), loaded: true, ...(nCtx > 0 ? { contextTokens: nCtx, contextSource: 'llama.cpp /props' } : {}) };
  }
  if (kind === 'lmstudio') {
    const list = await getJSON(`${root}/api/v0/models`, apiKey, {}, signal);
    const entries: any[] = Array.isArray(list?.data) ? list.data : [];
    const entry = entries.find((candidate) => sameModel(String(candidate.id), model));
    const context = Number(entry?.loaded_context_length ?? entry?.max_context_length);
    return {
      kind,
      models: entries.map((candidate) => String(candidate.id)),
      loaded: entry ? entry.state === 'loaded' : undefined,
      ...(context > 0 ? { contextTokens: context, contextSource: entry?.loaded_context_length ? 'LM Studio (loaded context)' : "LM Studio (the model's maximum)" } : {}),
    };
  }
  const list = await getJSON(`${baseURL.replace(/\/+$/, '')}/models`, apiKey, {}, signal);
  const entry = Array.isArray(list?.data) ? list.data.find((candidate: any) => candidate?.id === model) : undefined;
  const maxLen = Number(entry?.max_model_len);
  return { kind, models: idsOf(list), ...(maxLen > 0 ? { contextTokens: maxLen, contextSource: 'vLLM max_model_len (/v1/models)' } : {}) };
}

function idsOf(list: any): string[] | undefined {
  return Array.isArray(list?.data) ? list.data.map((entry: any) => String(entry.id)) : undefined;
}

/** Forgets what was learnt (tests start servers on reused ports). */
export function forgetServers(): void {
  kinds.clear();
}
