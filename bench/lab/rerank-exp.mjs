// Experiments for bench/lab/rerank.mjs. `node bench/lab/rerank-exp.mjs <name> [domains]`.
import { Lab, report, contentTerms, buildFtsQuery, quoteFtsToken, tokenize, stem, STOPWORDS } from './rerank.mjs';
import { scoreQuery } from '../../dist/eval/metrics.js';
import { fuse } from '../../dist/retrieve/fuse.js';

const exp = process.argv[2] ?? 'base';
const domains = process.argv.slice(3).length ? process.argv.slice(3) : ['cloud', 'fiqa'];
const labs = domains.map((d) => new Lab(d));
console.log(`| variant | ${domains.map((d) => `${d} rewrite | ${d} raw`).join(' | ')} |`);

const experiments = {
  async base() {
    await report(labs, 'shipped (baseline)', {});
  },
  async depth() {
    // recall of the fused candidate list at depth N: the headroom for a reranker
    for (const lab of labs) {
      for (const which of ['reference', 'raw']) {
        const acc = { 5: 0, 10: 0, 20: 0, 50: 0, 100: 0, 200: 0 };
        for (const t of lab.tasks) {
          const q = which === 'raw' ? t.question : (t.reference_rewrite ?? t.question);
          const fused = fuse(await lab.vector(q), lab.keyword(buildFtsQuery(q)));
          const names = [];
          const seen = new Set();
          for (const h of fused) { const n = lab.chunks.get(h.id)?.name; if (n && !seen.has(n)) { seen.add(n); names.push(n); } }
          for (const k of Object.keys(acc)) acc[k] += t.relevant.filter((r) => names.slice(0, +k).includes(r)).length / t.relevant.length;
        }
        console.log(lab.domain, which, Object.entries(acc).map(([k, v]) => `R@${k} ${(v / lab.tasks.length).toFixed(3)}`).join('  '));
      }
    }
  },
  async phrases() {
    // adjacent content-term pairs as FTS5 phrases OR-ed to the terms (sequential dependence)
    const pairs = (q, gap) => {
      const t = contentTerms(q);
      const out = [];
      for (let i = 0; i + 1 < t.length; i++) if (t[i] !== t[i + 1]) out.push([t[i], t[i + 1]]);
      return out;
    };
    const base = (q) => buildFtsQuery(q);
    await report(labs, 'FTS: terms OR adjacent content pairs as phrases', {
      match: (q) => [base(q), ...pairs(q).map(([a, b]) => quoteFtsToken(`${a} ${b}`))].filter(Boolean).join(' OR '),
    });
    for (const w of [2, 5, 10]) {
      await report(labs, `FTS: terms OR NEAR(pair, ${w})`, {
        match: (q) => [base(q), ...pairs(q).map(([a, b]) => `NEAR(${quoteFtsToken(a)} ${quoteFtsToken(b)}, ${w})`)].filter(Boolean).join(' OR '),
      });
    }
    // adjacent raw tokens (stopwords kept inside the phrase: "install the sdk" style)
    await report(labs, 'FTS: terms OR adjacent raw-token pairs (>=1 content word) as phrases', {
      match: (q) => {
        const toks = tokenize(q);
        const ph = [];
        for (let i = 0; i + 1 < toks.length; i++) if (!(STOPWORDS.has(toks[i]) && STOPWORDS.has(toks[i + 1]))) ph.push(quoteFtsToken(`${toks[i]} ${toks[i + 1]}`));
        return [base(q), ...new Set(ph)].filter(Boolean).join(' OR ');
      },
    });
  },
  async phrase3() {
    // the phrase query as a third ranked list, min-max normalised, added with weight mu
    const pairs = (q) => {
      const t = contentTerms(q);
      const out = [];
      for (let i = 0; i + 1 < t.length; i++) if (t[i] !== t[i + 1]) out.push([t[i], t[i + 1]]);
      return out;
    };
    const rawPairs = (q) => {
      const toks = tokenize(q);
      const ph = [];
      for (let i = 0; i + 1 < toks.length; i++) if (!(STOPWORDS.has(toks[i]) && STOPWORDS.has(toks[i + 1]))) ph.push([toks[i], toks[i + 1]]);
      return ph;
    };
    const kinds = {
      phrase: (q) => [...new Set(pairs(q).map(([a, b]) => quoteFtsToken(`${a} ${b}`)))].join(' OR '),
      near5: (q) => pairs(q).map(([a, b]) => `NEAR(${quoteFtsToken(a)} ${quoteFtsToken(b)}, 5)`).join(' OR '),
      rawphrase: (q) => [...new Set(rawPairs(q).map(([a, b]) => quoteFtsToken(`${a} ${b}`)))].join(' OR '),
    };
    for (const [kind, build] of Object.entries(kinds)) {
      for (const mu of (process.env.MUS ?? '0.2,0.35,0.5').split(',').map(Number)) {
        await report(labs, `third list: ${kind} bm25 (top 100) x${mu}`, {
          rerank: (q, fused, lab) => {
            const m = build(q);
            if (!m) return fused;
            const hits = lab.keyword(m, 100);
            return addList(fused, hits, mu);
          },
        });
      }
    }
  },
  async jsrerank() {
    const grid = JSON.parse(process.env.GRID ?? '[]');
    const configs = grid.length ? grid : [
      { a: 0.3, b: 0 }, { a: 0.6, b: 0 }, { a: 0, b: 0.3 }, { a: 0, b: 0.6 }, { a: 0.3, b: 0.3 }, { a: 0.3, b: 0.6 },
    ];
    for (const c of configs) {
      await report(labs, `JS rerank top ${c.n ?? 100}: cov x${c.a}, pairs(${c.pairs ?? 'raw'}, w${c.w ?? 1}) x${c.b}${c.t ? `, title cov x${c.t}` : ''}`, {
        rerank: (q, fused, lab) => jsRerank(q, fused, lab, c),
      });
    }
  },
  async combo() {
    // the SDM keyword side plus a JS rerank of the fused top 100
    const grid = JSON.parse(process.env.GRID ?? '[{"t":0.1},{"t":0.2},{"t":0.4},{"a":0.2},{"b":0.2}]');
    const lambda = Number(process.env.LAMBDA ?? 0.25);
    for (const c of grid) {
      await report(labs, `keyword = terms + ${lambda} x rawphrase; JS rerank ${JSON.stringify(c)}`, {
        keywordHits: sdmKeyword(lambda, rawPairs, 100, c.missing ?? 'exact', c.uniDepth ?? 100),
        rerank: (q, fused, lab) => jsRerank(q, fused, lab, c),
        fuseOptions: c.fuse,
      });
    }
  },
  async sdm() {
    // keyword score = bm25(terms) + lambda * bm25(phrases), summed on the raw bm25 scale over the
    // union of both top-100 lists, then fused with the vector side as usual
    const rawPairs = (q) => {
      const toks = tokenize(q);
      const ph = [];
      for (let i = 0; i + 1 < toks.length; i++) if (!(STOPWORDS.has(toks[i]) && STOPWORDS.has(toks[i + 1]))) ph.push(quoteFtsToken(`${toks[i]} ${toks[i + 1]}`));
      return [...new Set(ph)].join(' OR ');
    };
    const contentPairs = (q) => {
      const t = contentTerms(q);
      const ph = [];
      for (let i = 0; i + 1 < t.length; i++) if (t[i] !== t[i + 1]) ph.push(quoteFtsToken(`${t[i]} ${t[i + 1]}`));
      return [...new Set(ph)].join(' OR ');
    };
    const kinds = { rawphrase: rawPairs, phrase: contentPairs };
    for (const kind of (process.env.KINDS ?? 'rawphrase').split(',')) {
      for (const lambda of (process.env.LAMBDAS ?? '0.1,0.25,0.5').split(',').map(Number)) {
        await report(labs, `keyword = bm25(terms) + ${lambda} x bm25(${kind})`, {
          keywordHits: sdmKeyword(lambda, kinds[kind]),
        });
      }
    }
  },
};

const rawPairs = (q) => {
  const toks = tokenize(q);
  const ph = [];
  for (let i = 0; i + 1 < toks.length; i++) if (!(STOPWORDS.has(toks[i]) && STOPWORDS.has(toks[i + 1]))) ph.push(quoteFtsToken(`${toks[i]} ${toks[i + 1]}`));
  return [...new Set(ph)].join(' OR ');
};

const sdmMemo = new Map();
function sdmKeyword(lambda, phrases, depth = 100, missing = 'exact', uniDepth = depth) {
  return (q, lab) => {
    const key = [lab.domain, lambda, phrases.name, depth, missing, uniDepth, q].join('\u0000');
    if (!sdmMemo.has(key)) sdmMemo.set(key, sdmKeywordUncached(lambda, phrases, depth, missing, uniDepth)(q, lab));
    return sdmMemo.get(key);
  };
}
function sdmKeywordUncached(lambda, phrases, depth, missingMode, uniDepth) {
  return (q, lab) => {
            const uniQ = buildFtsQuery(q);
            const uni = lab.keyword(uniQ, uniDepth);
            const pq = phrases(q);
            if (!pq || !uniQ) return uni;
            const phr = lab.keyword(pq, depth);
            const score = new Map(uni.map((h) => [h.id, h.score]));
            const missing = phr.filter((h) => !score.has(h.id)).map((h) => h.id);
            if (missingMode === 'exact') for (const r of lab.keywordFor(uniQ, missing)) score.set(r.id, r.score);
            const worst = uni.length ? uni[uni.length - 1].score : 0;
            for (const h of phr) {
              if (!score.has(h.id) && missingMode === 'ignore') continue;
              score.set(h.id, (score.get(h.id) ?? worst) + lambda * h.score);
            }
            return [...score].map(([id, s]) => ({ id, score: s })).sort((x, y) => x.score - y.score || x.id - y.id).slice(0, 100).map((h, i) => ({ ...h, rank: i + 1 }));
  };
}

const tokCache = new Map();
function chunkTokens(lab, id) {
  let v = tokCache.get(lab.domain + id);
  if (!v) {
    const c = lab.chunks.get(id);
    const headingPath = c.heading ? c.heading.split(' > ') : [];
    const titleParts = c.title && headingPath[0] !== c.title ? [c.title, ...headingPath] : headingPath;
    const title = tokenize(titleParts.join(' ')).map(stem);
    const body = tokenize(c.text).map(stem);
    const all = [...title, ...body];
    const pos = new Map();
    all.forEach((t, i) => { let l = pos.get(t); if (!l) pos.set(t, (l = [])); l.push(i); });
    v = { pos, title: new Set(title), titleLen: title.length };
    tokCache.set(lab.domain + id, v);
  }
  return v;
}

function idf(lab, term) {
  const df = lab.df(term);
  return Math.log(1 + (lab.nChunks - df + 0.5) / (df + 0.5));
}

/** Reranks the fused top n by fused + a*coverage + b*pair proximity + t*title coverage. */
function jsRerank(q, fused, lab, { a = 0, b = 0, t = 0, n = 100, w = 1, pairs = 'raw', idf: useIdf = true }) {
  const toks = tokenize(q).map(stem);
  const content = [...new Set(toks.filter((x, i) => !STOPWORDS.has(tokenize(q)[i])))];
  const qStems = content.length ? content : [...new Set(toks)];
  const rawToks = tokenize(q);
  const pairList = [];
  if (pairs === 'raw') {
    for (let i = 0; i + 1 < rawToks.length; i++) if (!(STOPWORDS.has(rawToks[i]) && STOPWORDS.has(rawToks[i + 1]))) pairList.push([toks[i], toks[i + 1]]);
  } else {
    const ct = rawToks.map((x, i) => [x, toks[i]]).filter(([x]) => !STOPWORDS.has(x)).map(([, s]) => s);
    for (let i = 0; i + 1 < ct.length; i++) if (ct[i] !== ct[i + 1]) pairList.push([ct[i], ct[i + 1]]);
  }
  const qIdf = new Map(qStems.map((s) => [s, useIdf ? idf(lab, s) : 1]));
  const pairW = pairList.map(([x, y]) => idf(lab, x) + idf(lab, y));
  const totalIdf = [...qIdf.values()].reduce((s, x) => s + x, 0) || 1;
  const totalPair = pairW.reduce((s, x) => s + x, 0) || 1;
  const head = fused.slice(0, n).map((h) => {
    const ct = chunkTokens(lab, h.id);
    let cov = 0, tcov = 0;
    for (const [s, v] of qIdf) { if (ct.pos.has(s)) cov += v; if (ct.title.has(s)) tcov += v; }
    let prox = 0;
    pairList.forEach(([x, y], i) => {
      const px = ct.pos.get(x), py = ct.pos.get(y);
      if (!px || !py) return;
      let hit = false;
      for (const p of px) { for (const r of py) { if (r > p && r - p <= w) { hit = true; break; } } if (hit) break; }
      if (hit) prox += pairW[i];
    });
    return { ...h, score: h.score + a * cov / totalIdf + b * prox / totalPair + t * tcov / totalIdf };
  });
  head.sort((x, y) => y.score - x.score || x.id - y.id);
  return [...head, ...fused.slice(n)];
}

/** Adds a min-max normalised "lower is better" list to fused scores with weight mu, re-sorts. */
function addList(fused, hits, mu) {
  const byId = new Map(fused.map((h) => [h.id, { ...h }]));
  if (hits.length) {
    let min = Infinity, max = -Infinity;
    for (const h of hits) { min = Math.min(min, h.score); max = Math.max(max, h.score); }
    const span = max - min;
    for (const h of hits) {
      const n = span > 0 ? (max - h.score) / span : 1;
      const e = byId.get(h.id) ?? { id: h.id, score: 0, rank: 0 };
      e.score += mu * n;
      byId.set(h.id, e);
    }
  }
  return [...byId.values()].sort((a, b) => b.score - a.score || a.id - b.id);
}
await experiments[exp]();
