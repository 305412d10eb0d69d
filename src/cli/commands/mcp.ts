// `ragline mcp`: serves search, ask, sessions, replay and the indexed documents
// to an MCP client over stdio (src/mcp). stdout carries protocol messages only;
// diagnostics go to stderr. The server ends when the client closes its stdin, or
// on SIGINT/SIGTERM.

import type { Command } from 'commander';
import { openWorkspaceFor, settingsFor } from '../context.js';
import { ioOf } from '../io.js';
import { outputFor } from '../output.js';

export function registerMcp(program: Command): void {
  program
    .command('mcp')
    .description('serve search, ask, sessions and replay to an MCP client (agents, desktop assistants, editors) over stdio')
    .option('--session <id|name>', "session of the calls that name none (continued if it exists); default: a new one named after the client")
    .addHelpText(
      'after',
      `
Add it to an MCP client's configuration, e.g.:
  { "mcpServers": { "ragline": { "command": "ragline", "args": ["--db", "/path/to/ragline.db", "mcp"] } } }

Tools: search, ask, sessions, replay. Resources: ragline://doc/<path>#L<from>-<to>.`,
    )
    .action(async (flags: { session?: string }, command: Command) => {
      const settings = settingsFor(command);
      const io = ioOf(command);
      const [{ RaglineMcpServer }, { LineTransport }] = await Promise.all([import('../../mcp/server.js'), import('../../mcp/stdio.js')]);
      // Through the CLI's writer: sanitised, then redacted (a key split by an invisible character is whole again, and found).
      const output = outputFor(command);
      const log = (line: string) => output.err(`ragline mcp: ${line}`);
      const server = new RaglineMcpServer({
        config: settings.config,
        openWorkspace: () => openWorkspaceFor(settings),
        sessionName: flags.session,
        version: command.parent?.version() ?? '0.0.0',
        log,
      });
      let stop = () => {};
      const ended = new Promise<void>((resolve) => (stop = resolve));
      // Should the connection close for any other reason, the process ends too: never a server that answers nothing.
      server.mcp.server.onclose = stop;
      io.stdin.once('end', stop);
      io.stdin.once('close', stop);
      io.signals.on('SIGINT', stop);
      io.signals.on('SIGTERM', stop);
      const transport = new LineTransport(io.stdin, io.stdout, { log });
      try {
        await server.connect(transport);
        log(`serving ${settings.config.db} on stdio`);
        if (io.stdin.isTTY) {
          log('this is a server for an MCP client, which starts it and speaks JSON-RPC on its stdin and stdout;');
          log('add it to the client\'s configuration (see `ragline mcp --help`). Ctrl-D or Ctrl-C stops it.');
        }
        await ended;
      } finally {
        io.stdin.off('end', stop);
        io.stdin.off('close', stop);
        io.signals.off('SIGINT', stop);
        io.signals.off('SIGTERM', stop);
      }
      await server.close();
      // Background loads and worker threads must not keep the process alive.
      setTimeout(() => io.exit(Number(process.exitCode ?? 0)), 500).unref();
    });
}
