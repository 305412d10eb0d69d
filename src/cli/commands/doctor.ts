// `ragline doctor`: checks the setup end to end and says what to fix (the checks
// are in src/app/doctor.ts). Any fail makes the exit code 1.

import type { Command } from 'commander';
import { DEFAULT_DOCTOR_TIMEOUT_MS, runDoctor } from '../../app/doctor.js';
import type { Check, CheckStatus } from '../../app/index.js';
import { settingsFor, wholeNumberFlag } from '../context.js';
import { setExitCode } from '../io.js';
import { outputFor, type Output } from '../output.js';
import { oneLine as safeLine } from '../../util/sanitize.js';

export function registerDoctor(program: Command): void {
  program
    .command('doctor')
    .description('check the database, index, SQLite/sqlite-vec and the model server; each problem with a fix')
    .option('--json', 'print the checks and findings as JSON')
    .option('--timeout <ms>', `how long to wait for the model server to answer (default ${DEFAULT_DOCTOR_TIMEOUT_MS})`)
    .addHelpText(
      'after',
      `
Exit code 1 when any check fails (warnings do not count). Nothing is changed:
the database is opened read-only. Against a model server it sends GET /models, asks
the server what it is and each model's context window (Ollama's /api/..., llama.cpp's
/props, LM Studio's /api/v0/models), and times a one-line reply from each chat model
and one embedding; each waits at most --timeout.

Examples:
  ragline doctor
  ragline doctor --json
  OPENAI_BASE_URL=http://localhost:11434/v1 ragline doctor`,
    )
    .action(async (flags: { json?: boolean; timeout?: string }, command: Command) => {
      const output = outputFor(command);
      const timeoutMs = wholeNumberFlag(flags.timeout ?? String(DEFAULT_DOCTOR_TIMEOUT_MS), '--timeout', 1, 2 ** 31 - 1, 'a whole number of milliseconds');
      const report = await runDoctor(() => settingsFor(command), timeoutMs);
      const failed = report.checks.some((check) => check.status === 'fail');
      if (flags.json) output.json({ ok: !failed, checks: report.checks, ...report.facts });
      else printReport(report.checks, output);
      if (failed) setExitCode(command, 1);
    });
}

function printReport(checks: Check[], output: Output): void {
  const { color } = output;
  const label: Record<CheckStatus, string> = { ok: color.green('ok  '), warn: color.yellow('warn'), fail: color.red('fail') };
  const width = Math.max(...checks.map((check) => check.id.length));
  for (const check of checks) {
    // Messages carry model ids, paths and the server's words: shown through the sanitiser.
    output.out(`${label[check.status]}  ${check.id.padEnd(width)}  ${safeLine(check.message)}`);
    if (check.fix && check.status !== 'ok') output.out(`${' '.repeat(6 + width + 2)}${color.dim('fix: ' + safeLine(check.fix))}`);
  }
  const failed = checks.filter((check) => check.status === 'fail').length;
  const warned = checks.filter((check) => check.status === 'warn').length;
  const verdict =
    failed > 0 ? color.red(`${failed} failed`) : warned > 0 ? color.yellow('no failures') : color.green('all good');
  output.out(`\n${verdict}${warned > 0 ? `, ${warned} warning${warned === 1 ? '' : 's'}` : ''}.`);
}
