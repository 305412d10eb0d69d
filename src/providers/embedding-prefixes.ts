// What an embedding model wants put before a text, by the model's name. Many
// retrieval models were trained with one instruction on queries and another (or
// none) on documents, and retrieve markedly worse without them; the server does
// not add them, the client must. The table below is data: one row per family,
// each with where its card says so, and test/embedding-prefixes.test.ts checks
// each row on the names the family is served under (Hugging Face ids, Ollama
// tags, GGUF files, LM Studio's ids).
//
// The prefixes an index was built with are recorded with it (src/store/meta.ts),
// so a query is embedded the way its documents were, whatever this table says later.

/** What is put before each text, by what the text is. */
export interface EmbeddingPrefixes {
  /** Before a search query. */
  query: string;
  /** Before a document (a chunk) when it is indexed. */
  document: string;
}

/** What a text is to the embedder: a search query, or a document to be found. */
export type EmbedPurpose = keyof EmbeddingPrefixes;

export const NO_PREFIXES: EmbeddingPrefixes = Object.freeze({ query: '', document: '' });

/** The query instruction of bge (English), mxbai-embed-large and snowflake-arctic-embed v1/v1.5. */
const REPRESENT_FOR_SEARCH = 'Represent this sentence for searching relevant passages: ';
/** The retrieval task of instruction-tuned models (Qwen3-Embedding, e5-mistral, multilingual-e5-instruct). */
const WEB_SEARCH_TASK = 'Given a web search query, retrieve relevant passages that answer the query';

export interface PrefixRule {
  /** Name of the family, as `doctor` shows it. */
  family: string;
  /** Matched against the model name, lower-cased. */
  pattern: RegExp;
  prefixes: EmbeddingPrefixes;
  /** Names the family is served under, for the table test. */
  examples: string[];
}

/** First match wins: the more specific rows come first. */
export const PREFIX_RULES: readonly PrefixRule[] = [
  {
    // "embed your documents as search_document: <text here> and embed your user queries as
    // search_query: <text here>" (https://Huggingface.co/nomic-ai/nomic-embed-text-v1, model card);
    // the GGUF card the Ollama model comes from says the same
    // (https://huggingface.co/nomic-ai/nomic-embed-text-v1.5-GGUF/commit/f750a25aba2d24830d874eb4e1af468f37248a37).
    family: 'nomic-embed-text',
    pattern: /nomic-embed-text/,
    prefixes: { query: 'search_query: ', document: 'search_document: ' },
    examples: ['nomic-embed-text', 'nomic-embed-text:latest', 'nomic-ai/nomic-embed-text-v1.5', 'text-embedding-nomic-embed-text-v1.5', 'nomic-embed-text-v2-moe'],
  },
  {
    // The instruct variants take the task on queries, nothing on documents: "f'Instruct:
    // {task_description}\nQuery: {query}' ... you should not add instructions to the documents"
    // (https://huggingface.co/intfloat/multilingual-e5-large-instruct/discussions/4).
    family: 'e5-instruct',
    pattern: /e5-mistral|(?:^|[^a-z0-9])(?:multilingual-)?e5-[a-z0-9-]*instruct/,
    prefixes: { query: `Instruct: ${WEB_SEARCH_TASK}\nQuery: `, document: '' },
    examples: ['intfloat/e5-mistral-7b-instruct', 'intfloat/multilingual-e5-large-instruct'],
  },
  {
    // "Do I need to add the prefix "query: " and "passage: " to input texts? Yes, this is how the
    // model is trained" (the e5-v2 FAQ, copied at
    // https://github.com/david-tempelmann/databricks-ml-examples/blob/master/llm-models/embedding/e5-v2).
    family: 'e5',
    pattern: /(?:^|[^a-z0-9])(?:multilingual-)?e5-(?:small|base|large)/,
    prefixes: { query: 'query: ', document: 'passage: ' },
    examples: ['intfloat/e5-large-v2', 'intfloat/multilingual-e5-small', 'jeffh/intfloat-multilingual-e5-large:f16', 'e5-base-v2'],
  },
  {
    // bge-m3 takes no instruction: "you need to pass query_instruction="" for model_name="BAAI/bge-m3""
    // (https://docs.langchain.com/oss/python/integrations/text_embedding/bge_huggingface).
    family: 'bge-m3',
    pattern: /bge-m3/,
    prefixes: NO_PREFIXES,
    examples: ['bge-m3', 'BAAI/bge-m3', 'bge-m3:567m'],
  },
  {
    // "BAAI/bge-large-zh-v1.5 | Chinese | 为这个句子生成表示以用于检索相关文章:" and "no instruction
    // need to be added to passages" (https://databricks.github.io/databricks-ml-examples/llm-models/embedding/bge).
    family: 'bge (Chinese)',
    pattern: /bge-(?:small|base|large)-zh/,
    prefixes: { query: '为这个句子生成表示以用于检索相关文章:', document: '' },
    examples: ['BAAI/bge-large-zh-v1.5', 'bge-small-zh-v1.5'],
  },
  {
    // "BAAI/bge-large-en-v1.5 | English | Represent this sentence for searching relevant passages:"
    // on queries; "In all cases, no instruction need to be added to passages" (same page as above).
    // Ollama's `bge-large` is bge-large-en-v1.5.
    family: 'bge',
    pattern: /bge-(?:small|base|large)(?:-en|$|[:._-])/,
    prefixes: { query: REPRESENT_FOR_SEARCH, document: '' },
    examples: ['BAAI/bge-large-en-v1.5', 'bge-small-en-v1.5', 'bge-large', 'bge-large:335m', 'CompendiumLabs/bge-base-en-v1.5-gguf'],
  },
  {
    // "you have to provide the prompt `Represent this sentence for searching relevant passages:` for
    // query if you want to use it for retrieval. Besides that you don't need any prompt."
    // (https://huggingface.co/mixedbread-ai/mxbai-embed-large-v1/commit/81e7ea96ab89d2caa5d8ff56e12346d90469ee60);
    // Ollama's page shows the same prompt (https://ollama.com/library/mxbai-embed-large:latest).
    family: 'mxbai-embed-large',
    pattern: /mxbai-embed-large/,
    prefixes: { query: REPRESENT_FOR_SEARCH, document: '' },
    examples: ['mxbai-embed-large', 'mxbai-embed-large:335m', 'mixedbread-ai/mxbai-embed-large-v1'],
  },
  {
    // Arctic Embed 2.0 was trained with "query: " on queries and nothing on documents
    // (third-party summary of the card: https://hivebook.wiki/wiki/snowflake-arctic-embed-apache-2-0-multilingual-embedding-family,
    // "The prompt_name="query" argument auto-prepends "query: "").
    family: 'snowflake-arctic-embed 2.0',
    pattern: /snowflake-arctic-embed(?:2|-[a-z]+-v2)/,
    prefixes: { query: 'query: ', document: '' },
    examples: ['snowflake-arctic-embed2', 'snowflake-arctic-embed2:568m', 'Snowflake/snowflake-arctic-embed-l-v2.0', 'snowflake-arctic-embed-m-v2.0'],
  },
  {
    // v1 and v1.5: `query_prefix = 'Represent this sentence for searching relevant passages: '`
    // (https://huggingface.co/Snowflake/snowflake-arctic-embed-m/commit/b30c8a2a2e623ff22cfecd618b3a44339b366d53);
    // m-long too: "It only has the prefix for queries vs docs."
    // (https://huggingface.co/Snowflake/snowflake-arctic-embed-m-long/discussions/13).
    family: 'snowflake-arctic-embed',
    pattern: /snowflake-arctic-embed/,
    prefixes: { query: REPRESENT_FOR_SEARCH, document: '' },
    examples: ['snowflake-arctic-embed', 'snowflake-arctic-embed:335m', 'Snowflake/snowflake-arctic-embed-m-v1.5', 'snowflake-arctic-embed-m-long'],
  },
  {
    // "Retrieval-query": "task: search result | query: ", "Retrieval-document": "title: none | text: "
    // (the model's sentence-transformers prompts, as Ollama ships them:
    // https://ollama.com/library/embeddinggemma-2:740m/blobs/031e56a498d3).
    family: 'embeddinggemma',
    pattern: /embedding-?gemma/,
    prefixes: { query: 'task: search result | query: ', document: 'title: none | text: ' },
    examples: ['embeddinggemma', 'embeddinggemma:300m', 'google/embeddinggemma-300m', 'unsloth/embeddinggemma-300m-GGUF'],
  },
  {
    // `f'Instruct: {task_description}\nQuery:{query}'` with the task "Given a web search query,
    // retrieve relevant passages that answer the query", on queries only ("Always add instructions
    // to queries, never to documents"): the model card's usage code (https://github.com/QwenLM/Qwen3-Embedding).
    family: 'Qwen3-Embedding',
    pattern: /qwen3-embedding/,
    prefixes: { query: `Instruct: ${WEB_SEARCH_TASK}\nQuery:`, document: '' },
    examples: ['Qwen/Qwen3-Embedding-0.6B', 'qwen3-embedding:8b', 'dengcao/Qwen3-Embedding-0.6B:Q8_0', 'Qwen3-Embedding-4B-GGUF'],
  },
];

/** The rule for `model`, or undefined when its family is not known (it is then sent texts as they are). */
export function prefixRuleFor(model: string): PrefixRule | undefined {
  const name = model.trim().toLowerCase();
  return PREFIX_RULES.find((rule) => rule.pattern.test(name));
}

/** What the table gives `model`: its family's prefixes, or none. */
export function modelPrefixes(model: string): EmbeddingPrefixes {
  return prefixRuleFor(model)?.prefixes ?? NO_PREFIXES;
}

/**
 * The prefixes to embed with: each side as set (embedding.queryPrefix /
 * embedding.documentPrefix; the workspace sets them to what an existing index
 * recorded), else as the table gives `model`.
 */
export function resolvePrefixes(model: string, set: { queryPrefix?: string; documentPrefix?: string }): EmbeddingPrefixes {
  const fromModel = modelPrefixes(model);
  return { query: set.queryPrefix ?? fromModel.query, document: set.documentPrefix ?? fromModel.document };
}

export function samePrefixes(a: EmbeddingPrefixes, b: EmbeddingPrefixes): boolean {
  return a.query === b.query && a.document === b.document;
}

/** `query "search_query: ", document "search_document: "`, or `none`, for messages. */
export function describePrefixes(prefixes: EmbeddingPrefixes): string {
  if (prefixes.query === '' && prefixes.document === '') return 'none';
  const side = (text: string) => (text === '' ? 'none' : JSON.stringify(text));
  return `query ${side(prefixes.query)}, document ${side(prefixes.document)}`;
}
