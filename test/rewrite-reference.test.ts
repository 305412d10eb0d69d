import { describe, expect, it } from 'vitest';
import { classifyQuestion } from '../src/rewrite/gate.js';
import { ingForm, OfflineRewriter } from '../src/rewrite/offline.js';
import { findReferences, ownWords, referenceSignal } from '../src/rewrite/reference.js';
import { answerName, enumerationItems, inlineItems, questionFocus } from '../src/rewrite/referent.js';
import type { ConversationTurn } from '../src/rewrite/types.js';

describe('referring expressions: one module for the gate and the rewriter', () => {
  // [question, the references it holds as kind:text (number), in order]
  const table: [string, string[]][] = [
    ['does it work with large files?', ['pronoun:it (singular)']],
    // The second "it" follows the first: only the first points out of the question.
    ['does it propagate to targets that link against it?', ['pronoun:it (singular)']],
    ['how do I deprecate it later?', ['pronoun:it (singular)']],
    ['and unpublish it?', ['pronoun:it (singular)']],
    ['how do I kill it after a timeout?', ['pronoun:it (singular)']],
    ['how do I run the second one?', ['ordinal:the second one (singular)']],
    ['and the fourth one?', ['ordinal:the fourth one (singular)']],
    ['Is the latter supported in Europe?', ['ordinal:the latter (singular)']],
    ['How often should I do that?', ['action:do that (any)']],
    ['how do I do the same for a child process only?', ['action:do the same (any)']],
    ['What are their limits?', ['possessive:their (plural)']],
    ['how do I read its output?', ['possessive:its (singular)']],
    ['can I generate them automatically?', ['pronoun:them (plural)']],
    ['Is that free?', ['pronoun:that (singular)']],
    ['How much do those cost per month?', ['pronoun:those (plural)']],
    ['Can we migrate these keys?', ['determiner:these (plural)']],
    // A demonstrative whose next word has an article or possessive after it is the subject, that word its verb.
    ['will this break my build?', ['pronoun:this (singular)']],
    ['does that slow the program down much?', ['pronoun:that (singular)']],
    // The object of a verb whose subject is a name is not that name.
    ['how do I tell Valgrind to use it?', ['pronoun:it (singular)']],
    ['what happens if the compiler doesn\'t support it?', ['pronoun:it (singular)']],
    // A phrase of the question that disagrees in number, or that the question asks for, is not the antecedent.
    ['How many workspaces does it allow?', ['pronoun:it (singular)']],
    ['what signal does it send by default?', ['pronoun:it (singular)']],
    ['in which bash version was it added?', ['pronoun:it (singular)']], // a preposition before the wh-phrase
    ['In what release did it become the default?', ['pronoun:it (singular)']],
    ['is there a promise version of it?', ['pronoun:it (singular)']],
    ['how do I compare two of them without leaking timing?', ['pronoun:them (plural)']],
    // The object of a preposition is another participant than the clause's noun phrases; a possessive there is the clause's.
    ['can I use two-factor auth with it?', ['pronoun:it (singular)']],
    ['is it safe to store the salt next to it?', ['pronoun:it (singular)']],
    // After a preposition "it" is an object, not the dummy subject of "it is a/an ...".
    ['one entry in it is an array of plugin names', ['pronoun:it (singular)']],
    ['It is a good idea to pin versions', []],
    ['what are the expenses that a company has with its employees?', []],
    // "at the same time" is a time, not a thing said before.
    ['can I use it with Memcheck at the same time?', ['pronoun:it (singular)']],
    // "that" that ends its clause, or has a preposition or particle after it, is a verb's object, not a conjunction.
    ['Which ninja version added that?', ['pronoun:that (singular)']],
    ['is there a way to trigger that from another terminal?', ['pronoun:that (singular)']],
    ['can I turn that off?', ['pronoun:that (singular)']],
    // After a verb of saying or seeing, "that" opens a clause even before a preposition.
    ['The manual states that in version 1.10 the default changed; why?', []],
    ['I noticed that for large projects the build is slow', []],
    // ... but a "that" that ends the clause is a pronoun after them too, and "explain that" always one.
    ['Does the manual mention that?', ['pronoun:that (singular)']],
    ['Can you explain that in more detail?', ['pronoun:that (singular)']],
    // "one" standing for a noun said before; the word itself is the reference.
    ['Which one prints a compilation database?', ['one:one (singular)']],
    ['What is the depth of the console one?', ['one:one (singular)']],
    ['How do I assign a build statement to one?', ['one:one (singular)']],
    ['is there a faster one?', ['one:one (singular)']],
    ['can I rerun just the ones that failed?', ['one:ones (plural)']],
    // Not "one": a number, a partitive, the generic pronoun, "no one".
    ['how do I move a build from one to another?', ['one:one (singular)']],
    ['How do I change my login shell to one?', ['one:one (singular)']],
    ['I already set up my rules. How do I assign a build statement to one?', ['one:one (singular)']],
    ['How do I set the depth to one?', []],
    ['Can I limit parallel jobs to one?', []],
    ['can I go from one to two pools?', []],
    ['Is it true that one can run two builds at once?', []],
    ['I need one file for each target', []],
    ['is there one more option?', []],
    ['when one of them fails, what happens?', ['pronoun:them (plural)']],
    ['how does one install a package?', []],
    ['can no one else publish it?', ['pronoun:it (singular)']],
    // Not references: the dummy "it", conjunctions, relative "that", time, identifiers, an antecedent in the question.
    ['Is it recommended to rotate?', []],
    ['Is it safe to rotate?', []],
    ['Is it possible to rotate API keys without downtime?', []],
    ['How can I check that a webhook request really came from Orbitly?', []],
    ['Which targets that link to foo get its include directories?', []],
    ['What did the team ship this year?', []],
    ['Can I use it.example.com as my webhook host?', []],
    ['I added my credit card but it keeps failing', []],
    ['Why should I use IBM Cloud Kubernetes Service and what does it cost?', []],
  ];
  it.each(table)('"%s" -> %j', (question, expected) => {
    expect(findReferences(question).map((r) => `${r.kind}:${r.text} (${r.number})`)).toEqual(expected);
  });

  it('"the second one" and "the last one" carry their position', () => {
    expect(findReferences('how do I run the second one?')[0]).toMatchObject({ ordinal: 2 });
    expect(findReferences('and the last one?')[0]).toMatchObject({ ordinal: -1 });
  });

  const history = (...turns: [string, string?, string?][]): ConversationTurn[] =>
    turns.map(([question, standaloneQuery, answer]) => ({ question, standaloneQuery: standaloneQuery ?? question, answer: answer ?? '' }));

  it('the gate calls a question a follow-up exactly when the module finds a reference in it (the gate and the rewriter agree)', () => {
    const questions = [...table.map(([question]) => question), 'Does it expire?', 'How do I rotate the API key?', 'what about compile definitions?'];
    for (const question of questions) {
      const signal = referenceSignal(question);
      const gate = classifyQuestion(question, true);
      // An opener ("and ...", "what about ...") is named first when there is one.
      if (signal) expect(gate, question).toEqual({ kind: 'follow_up', reason: /^(and|what about) /i.test(question) ? gate.reason : signal });
      else expect(gate.reason, question).not.toMatch(/^pronoun|^reference/);
    }
  });

  it('"Is it recommended to rotate?" and "Is it safe to rotate?" get the same treatment: neither "it" is replaced', () => {
    const rewriter = new OfflineRewriter();
    const earlier = history(['How do I create an API key?']);
    const outcomes = ['Is it recommended to rotate?', 'Is it safe to rotate?'].map((question) =>
      rewriter.rewriteSync({ question, history: earlier, topics: [], policy: 'auto' }),
    );
    expect(outcomes.map((outcome) => outcome.decision)).toEqual(['rewritten', 'rewritten']);
    const reason = '2 content words; the question as typed, with words of the conversation in parentheses';
    expect(outcomes.map((outcome) => outcome.reason)).toEqual([reason, reason]);
    for (const outcome of outcomes) {
      expect(outcome.standaloneQuery).toMatch(/^Is it \w+ to rotate\? \(create an API key\)$/);
    }
  });
});

describe('referents from salience', () => {
  const rewriter = new OfflineRewriter();
  const rewrite = (question: string, ...turns: [string, string?, string?][]) =>
    rewriter.rewriteSync({
      question,
      history: turns.map(([q, standaloneQuery, answer]) => ({ question: q, standaloneQuery: standaloneQuery ?? q, answer: answer ?? '' })),
      topics: [],
      policy: 'auto',
    }).standaloneQuery;

  it('the object of the last question, not a piece of a name: "does it propagate" is the include directory, not "the CMake"', () => {
    expect(rewrite('does it propagate to targets that link against it?', ['How do I add an include directory to a target in CMake?'])).toBe(
      'does the include directory propagate to targets that link against it?',
    );
    expect(rewrite('how do I kill it after a timeout?', ['How do I run a shell command from Node.js and get its output?'])).toBe(
      'how do I kill the shell command after a timeout?',
    );
  });

  it('the package, not the two-factor authentication; and not "the deprecate" afterwards', () => {
    const first = 'How do I publish a package with two-factor authentication enabled?';
    const second = rewrite('how do I deprecate it later?', [first]);
    expect(second).toBe('how do I deprecate the package later?');
    expect(rewrite('and unpublish it?', [first], ['how do I deprecate it later?', second])).toBe('and unpublish the package?');
  });

  it('when no phrase clearly fits it does not pretend: "does it work with large files?" keeps "it" and adds the last question\'s action', () => {
    const query = rewrite('does it work with large files?', ['How do I read a file line by line in Node.js?']);
    expect(query).toBe('does it work with large files? (read a file line by line in Node.js)');
    expect(query).not.toMatch(/the Node/);
  });

  it('after "is there something that ...?", "it" is what the answer named most (at least twice), and nothing when it named nothing twice', () => {
    const asked = 'Is there something that parses keyword arguments for me?';
    const answer = 'Extractive answer (no language model configured):\n- Consider the example macro `my_install()`: macro(my_install) cmake_parse_arguments(MY_INSTALL ...) [3]\n- `cmake_parse_arguments`: The first signature processes arguments. [2]\n- `cmake_parse_arguments`: The `<options>` argument contains all options. [2]';
    const history = [{ question: asked, standaloneQuery: asked, answer, quoted: true }];
    const rewriter = new OfflineRewriter();
    expect(rewriter.rewriteSync({ question: 'which kinds of keywords can I declare with it?', history, topics: [], policy: 'auto' }).standaloneQuery).toBe(
      'which kinds of keywords can I declare with cmake_parse_arguments?',
    );
    // An example's names (a file, a made-up name) are not the answer's; nor is a question about something wrong a question for a tool.
    const example = [{ question: asked, standaloneQuery: asked, answer: 'Run `node app.js`; app.js starts `my_server.start()`, and my_server.start() listens. app.js logs.', quoted: true }];
    expect(rewriter.rewriteSync({ question: 'does it work on Windows?', history: example, topics: [], policy: 'auto' }).standaloneQuery).not.toMatch(/app\.js|my_server/);
    const wrong = [{ question: 'Is there something wrong with my config?', standaloneQuery: 'Is there something wrong with my config?', answer, quoted: true }];
    expect(rewriter.rewriteSync({ question: 'how do I fix it?', history: wrong, topics: [], policy: 'auto' }).standaloneQuery).not.toMatch(/cmake_parse_arguments/);
    // One name once: not enough to say it is the answer's.
    const once = [{ question: asked, standaloneQuery: asked, answer: 'Use `cmake_parse_arguments` in your function.', quoted: true }];
    expect(rewriter.rewriteSync({ question: 'which kinds of keywords can I declare with it?', history: once, topics: [], policy: 'auto' }).standaloneQuery).toMatch(/with it\? \(/);
    // A question that asked about something named is read by its focus, not the answer's names.
    const named = [{ question: 'How do I parse keyword arguments in a CMake function?', standaloneQuery: 'How do I parse keyword arguments in a CMake function?', answer, quoted: true }];
    expect(rewriter.rewriteSync({ question: 'which kinds can I declare with it?', history: named, topics: [], policy: 'auto' }).standaloneQuery).not.toMatch(/cmake_parse_arguments\?/);
  });

  it('answerName counts names as written, in code and in prose, and wants one clearly ahead', () => {
    expect(answerName('`BUILD_ALL` and `build_all()` and build_all, then `cmake_parse_arguments` and cmake_parse_arguments()')).toBeUndefined();
    expect(answerName('Run `npm fund`. Then `npm fund <pkg>` opens it; `npm fund` lists them.')).toMatchObject({ phrase: 'npm fund', name: true });
    expect(answerName('i.e. this, e.g. that, i.e. again, e.g. again')).toBeUndefined();
    // A run of underscores before an unpaired backtick is read in one pass (the pattern had taken 131 s for 50).
    expect(answerName(`a${'_'.repeat(5_000)}\``)).toBeUndefined();
    expect(answerName('`__init__` and __init__ and `__init__`')).toMatchObject({ phrase: '__init__' });
  });

  it('a demonstrative phrase in the last question ("this service") is as salient as its focus: "it" is left as typed, not guessed', () => {
    const query = rewrite('example words of disgust it can detect?', ['Do I have to use a certain browser to use this service?']);
    expect(query).not.toMatch(/browser can detect/);
    expect(query).toMatch(/^example words of disgust it can detect\? \(/);
    // A demonstrative after a preposition is a circumstance, not a rival.
    expect(rewrite('does it need root?', ['How do I install the Relay agent on this machine?'])).toBe('does the Relay agent need root?');
    // Without one, the focus is taken.
    expect(rewrite('can it play video?', ['Do I have to use a certain browser?'])).toBe('can the certain browser play video?');
  });

  it('"which one", "the console one", "to one": the head noun of a plural focus, and what an earlier "one" stood for', () => {
    expect(rewrite('Which one prints a compilation database?', ['What tools does ninja -t provide?'])).toBe('Which tool prints a compilation database?');
    const pools = 'What are pools in ninja?';
    const assign = rewrite('How do I assign a build statement to one?', [pools]);
    expect(assign).toBe('How do I assign a build statement to a pool?');
    // The article is the noun's: "a user", "an option".
    expect(rewrite('How do I add a role to one?', ['What are users?'])).toBe('How do I add a role to a user?');
    expect(rewrite('How do I add a variable to one?', ['What are environments?'])).toBe('How do I add a variable to an environment?');
    expect(rewrite('How do I add a job to one?', ['What are hours in cron?'])).toBe('How do I add a job to an hour?');
    const depth = rewrite('What is the depth of the console one?', [pools], ['How do I assign a build statement to one?', assign]);
    expect(depth).toBe('What is the depth of the console pool?');
    expect(rewrite('Since which version is it available?', [pools], ['How do I assign a build statement to one?', assign], ['What is the depth of the console one?', depth])).toBe(
      'Since which version is the console pool available?',
    );
    // A singular focus is one thing: "the per-user one" of "an environment variable" is not guessed.
    expect(rewrite('how do I open the per-user one?', ['can I use an environment variable inside those files?'])).toMatch(/^how do I open the per-user one\? \(/);
    // After another reference of the question, "which one" is one of that one's referent.
    expect(rewrite('if a setting is in two of them, which one wins?', ['Where does npm keep its config files?'])).toBe('if a setting is in two of the config files, which one wins?');
  });

  it('"that" ending a question is the last question\'s focus', () => {
    expect(rewrite('Which ninja version added that?', ['How do I write a dyndep file?'])).toBe('Which ninja version added the dyndep file?');
  });

  it('"it" against two things named together is ambiguous: not substituted', () => {
    const query = rewrite('how do I disable it again?', ['what is the difference between auth-only and auth-and-writes?']);
    expect(query.startsWith('how do I disable it again? (')).toBe(true);
  });

  it('number agreement: "them" wants a plural or a list', () => {
    expect(rewrite('how do I run them in parallel?', ['How do I add a test in CMake?'])).toBe('how do I run tests in parallel?');
    expect(rewrite('how do I send them a message?', ['How do I share memory between worker threads?'])).toBe('how do I send worker threads a message?');
    expect(rewrite('what happens if I add too many of them?', ['How do I remove a listener?'])).toBe('what happens if I add too many of the listeners?');
  });

  it('"its" is the one name the last question mentioned', () => {
    expect(rewrite('how do I read its output?', ['How do I profile heap usage with Massif?'])).toBe("how do I read Massif's output?");
  });

  it('what the last "it" was resolved to stays the referent', () => {
    expect(
      rewrite(
        'how do I make it a hard requirement?',
        ['How do I set the C++ standard for a target?'],
        ["what happens if the compiler doesn't support it?", "what happens if the compiler doesn't support the C++ standard?"],
      ),
    ).toBe('how do I make the C++ standard a hard requirement?');
  });

  it('"the second one" resolves against an enumeration in the last answers, "the first one" against "X and Y" in the question', () => {
    const tools = 'Valgrind includes: 1. Memcheck, a memory error detector. 2. Cachegrind, a cache profiler. 3. Callgrind. 4. Helgrind, a thread error detector.';
    expect(rewrite('how do I run the second one?', ['Which tools come with Valgrind?', undefined, tools])).toBe('how do I run Cachegrind?');
    expect(rewrite('and the fourth one?', ['Which tools come with Valgrind?', undefined, tools], ['how do I run the second one?', 'how do I run Cachegrind?', 'Run valgrind --tool=cachegrind.'])).toBe(
      'and Helgrind?',
    );
    expect(rewrite('when should I use the first one?', ['What is the difference between npm ci and npm install?'])).toBe('when should I use npm ci?');
  });

  it('"the third one" resolves against names listed in a sentence of the last answer, after the question\'s own "X and Y"', () => {
    const types = '- `CMAKE_BUILD_TYPE`: Typical values include ``Debug``, ``Release``, ``RelWithDebInfo`` and ``MinSizeRel``, but custom build types can also be defined. [1]';
    expect(rewrite('what does the third one add to the compiler flags?', ['Which build types does CMake know?', undefined, types])).toBe(
      'what does RelWithDebInfo add to the compiler flags?',
    );
    expect(rewrite('and the last one?', ['Which build types does CMake know?', undefined, types])).toBe('and MinSizeRel?');
    const methods = '- The [`child_process.spawn()`][], [`child_process.fork()`][], [`child_process.exec()`][], and [`child_process.execFile()`][] methods all follow the idiomatic asynchronous programming pattern. [1]';
    expect(rewrite('how do I send messages to the second one?', ['Which asynchronous methods create a child process?', undefined, methods])).toBe(
      'how do I send messages to child_process.fork()?',
    );
    // The user's own order comes before a list the answer happens to hold.
    const differences = '- The main differences between using `npm install` and `npm ci` are: the project must have a `package-lock.json`. [4]';
    expect(rewrite('when should I use the first one?', ['What is the difference between npm ci and npm install?', undefined, differences])).toBe(
      'when should I use npm ci?',
    );
    expect(inlineItems(types).map((item) => item.phrase)).toEqual(['Debug', 'Release', 'RelWithDebInfo', 'MinSizeRel']);
    expect(inlineItems('Set `CMAKE_BUILD_TYPE` before `project()`, then run `cmake --build .`.')).toEqual([]); // spans, but no list
  });

  it('extractive answers (quoted sentences) are not an enumeration', () => {
    expect(enumerationItems('- For this reason, it should never be necessary to clear the cache. [1]\n- npm stores cache data in an opaque directory. [2]')).toEqual([]);
    expect(enumerationItems('1. Memcheck, a memory error detector. 2. Cachegrind, a cache profiler.').map((item) => item.phrase)).toEqual(['Memcheck', 'Cachegrind']);
  });

  it('"what about X?" and "and on X?" after a how-to question ask it again', () => {
    expect(rewrite('what about compile definitions?', ['How do I add an include directory to a target in CMake?'])).toBe(
      'How do I add compile definitions to a target in CMake?',
    );
    expect(rewrite('And on Windows?', ['How do I install the Relay agent?'])).toBe('How do I install the Relay agent on Windows?');
    expect(rewrite('and recursively?', ['How do I create a directory with fs?'])).toBe('How do I create a directory with fs recursively?');
    // A manner in place of the one the question had.
    expect(rewrite('and horizontally?', ['How do I split a tmux window vertically?'])).toBe('How do I split a tmux window horizontally?');
    // Only the opposite manner is replaced; a verb ending in -ly is no manner.
    expect(rewrite('and recursively?', ['How do I delete files permanently?'])).toBe('How do I delete files permanently recursively?');
    expect(rewrite('and interactively?', ['How do I apply a patch?'])).toBe('How do I apply a patch interactively?');
  });

  it('"it" for a focus that belongs to an "of" phrase keeps it: the default value of scale, not any default value', () => {
    expect(rewrite('how do I change it?', ['what is the default value of scale in bc?'])).toBe('how do I change the default value of scale?');
    expect(rewrite('does it work on Windows?', ['What does the recursive option of fs.readdir do?'])).toBe('does the recursive option of fs.readdir work on Windows?');
  });

  it('"and -a?" after a question about what one option does asks it of the other', () => {
    expect(rewrite('and -a?', ['what does time -p do?'])).toBe('what does time -a do?');
    expect(rewrite('what about --verbose?', ['What is --output-on-failure for in ctest?'])).toBe('What is --verbose for in ctest?');
    // After a question about doing something, maybe as well as the option named: context.
    expect(rewrite('and --force?', ['How do I install a package with npm -g?'])).toMatch(/^and --force\? \(/);
    // No option in the last question, or several: it is searched with the last question as context.
    expect(rewrite('and -a?', ['what does time -p -v do?'])).toMatch(/^and -a\? \(/);
  });

  it('"that command" points back even when the question names another thing before it', () => {
    const shown = rewrite('what does the --squash option do for that command?', ['How do I split a subdirectory into its own history with git subtree?']);
    // (Not resolved in place: a command is not the last question's focus, a subdirectory; its context says which.)
    expect(shown).toMatch(/^what does the --squash option do for that command\? \(git subtree, /);
  });

  it('"what about X?" after a question whether one can do something asks it again of X', () => {
    expect(rewrite('what about object libraries?', ['Can I link a module library into my executable with target_link_libraries?'])).toBe(
      'Can I link object libraries into my executable with target_link_libraries?',
    );
    expect(rewrite('and Helgrind?', ['Should we run Memcheck on a release build?'])).toBe('Should we run Helgrind on a release build?');
  });

  it('"and on X?" does not ask again a question whose rewrite left a pronoun in place: it gets the context', () => {
    const shown = rewrite(
      'and on Windows?',
      ['How do I run tests with ctest?'],
      ['how do I change it for one test?', 'how do I change it for one test? (time limit, ctest)'],
    );
    expect(shown).not.toMatch(/change it for one test on Windows/);
    expect(shown).toMatch(/^and on Windows\? \(.*ctest/);
  });

  it('"what about on X?" asks the last how-to question again, also when that one opened with "and"', () => {
    const shown = rewrite('what about on Windows?', ['How do I create a child process?'], ['and how do I kill it?', 'and how do I kill the child process?']);
    expect(shown).toBe('how do I kill the child process on Windows?');
  });

  it('"what about X?" is not swapped in when X is an action on the same verb: it keeps its words and gets the context', () => {
    const shown = rewrite('What about npm unpublish?', ['How do I publish a package to the npm registry?']);
    expect(shown).not.toMatch(/publish npm unpublish/);
    expect(shown).toMatch(/^What about npm unpublish\? \(publish a package/);
    expect(rewrite('what about the Windows agent?', ['How do I install the Relay agent?'])).toBe('How do I install the Windows agent?');
  });

  it('the -ing form of an action\'s verb', () => {
    const forms = ['rotate a key', 'run the tests', 'commit my changes', 'quit vim', 'continue the build', 'tie it', 'see the log', 'open a file', 'debug it', 'install it'].map(ingForm);
    expect(forms).toEqual(['rotating a key', 'running the tests', 'committing my changes', 'quitting vim', 'continuing the build', 'tying it', 'seeing the log', 'opening a file', 'debugging it', 'installing it']);
  });

  it('"doing that" and "undo that" take the action with its verb in the -ing form', () => {
    expect(rewrite('is there a time limit for doing it?', ['How do I unpublish a package?'])).toBe('is there a time limit for unpublishing a package?');
    expect(rewrite('how do I undo that?', ['How do I publish a package to the registry?'])).toBe('how do I undo publishing a package to the registry?');
    expect(rewrite('Is it safe to keep doing that?', ['How do I run the tests in parallel?'])).toBe('Is it safe to keep running the tests in parallel?');
  });

  it('"do that" is the action of the latest question that asked one', () => {
    expect(rewrite('Is it recommended to do that regularly?', ["How do I clear npm's cache?"], ['Is it safe to do that while an install is running?', "Is it safe to clear npm's cache while an install is running?"])).toBe(
      "Is it recommended to clear npm's cache regularly?",
    );
  });

  it('"they" and "them" can be one person ("let a coworker publish ... remove them")', () => {
    expect(rewrite('and how do I remove them again if they leave the project?', ['How do I let a coworker publish new versions of my package too?'])).toBe(
      'and how do I remove the coworker again if they leave the project?',
    );
    // Things, and people in a role, are many: "them" after "a test" is the tests, after "a user" the users.
    expect(rewrite('how do I run them in parallel?', ['How do I add a test?'])).toBe('how do I run tests in parallel?');
    expect(rewrite('how do I list them?', ['How do I add a user?'])).toBe('how do I list users?');
  });

  it('a phrase of five words is not cut to four', () => {
    expect(rewrite('how do I clear it?', ['How do I change the default npm registry cache directory?'])).not.toBe('how do I clear the default npm registry cache?');
  });

  it('the focus of a question is its object, its subject or what it asks about, never a generic word', () => {
    expect(questionFocus('How do I publish a package to the npm registry?').candidate?.phrase).toBe('package');
    expect(questionFocus('How does find_package locate a config file?').candidate?.phrase).toBe('find_package');
    // A subject without an article, its verb and the verb's object: the subject alone ("curl handle" is no thing);
    // with more words, where the verb stands is a guess, and there is no focus.
    expect(questionFocus('How does curl handle proxies?').candidate?.phrase).toBe('curl');
    expect(questionFocus('How does valgrind detect leaks?').candidate?.phrase).toBe('valgrind');
    expect(questionFocus('How do worker threads share memory?').candidate).toBeUndefined();
    expect(questionFocus('Does the build directory matter?').candidate?.phrase).toBe('build directory');
    expect(rewrite('how do I set it with an environment variable?', ['How does curl handle proxies?'])).not.toMatch(/curl handle/);
    expect(questionFocus('What are generator expressions in CMake?').candidate?.phrase).toBe('generator expressions');
    expect(questionFocus('What does the recursive option of fs.readdir do?')).toMatchObject({ candidate: { phrase: 'recursive option' }, owner: { phrase: 'fs.readdir' } });
    expect(questionFocus('Are the Lite pricing plans available with all account types?').candidate?.phrase).toBe('Lite pricing plans');
    // "that slow the program": "that" is the subject and "slow" its verb, not the phrase "the slow".
    expect(questionFocus('does that slow the program down much?')).toEqual({ pronoun: 'that' });
    expect(questionFocus('will this break my build?')).toEqual({ pronoun: 'this' });
    expect(questionFocus('What versions are available?').candidate).toBeUndefined();
    // "let/help X do ...": X is the one who does it, not "coworker publish new versions".
    expect(questionFocus('How do I let a coworker publish new versions of my package too?').candidate?.phrase).toBe('coworker');
    expect(questionFocus('How can I help my users install plugins?').candidate?.phrase).toBe('users');
    // Not a person: a noun or a verb after it, unknown, the phrase is left as read.
    expect(questionFocus('How can I help the build system find my libraries?').candidate?.phrase).not.toBe('build');
    expect(questionFocus('How do I make a release build?').candidate?.phrase).toBe('release build'); // "make" makes things
  });
});

describe('topics for people: ranked by how specific they are in this index', () => {
  it('"version" and "available" never lead; the active topic is the most salient specific one', async () => {
    const { rankTopicsForDisplay } = await import('../src/rewrite/topics.js');
    const shares: Record<string, number> = { version: 0.3, available: 0.2, private: 0.08, deprecate: 0.004, package: 0.03, propagate: 0.01, link: 0.09 };
    const termShare = (word: string) => shares[word.toLowerCase()] ?? 0.001;
    const topics = [
      { term: 'version', weight: 1.6, lastTurn: 3, source: 'question' as const },
      { term: 'available', weight: 1.2, lastTurn: 3, source: 'question' as const },
      { term: 'package', weight: 0.6, lastTurn: 2, source: 'question' as const },
      { term: 'npm deprecate', weight: 0.5, lastTurn: 2, source: 'answer' as const },
      { term: 'link', weight: 0.5, lastTurn: 3, source: 'answer' as const },
    ];
    const ranked = rankTopicsForDisplay(topics, termShare).map((topic) => topic.term);
    expect(ranked[0]).toBe('package');
    expect(ranked.slice(-3).sort()).toEqual(['available', 'link', 'version']);
    expect(ranked.indexOf('npm deprecate')).toBeLessThan(ranked.indexOf('version'));
  });

  it('a name is never generic, however often this index mentions it', async () => {
    const { rankTopicsForDisplay } = await import('../src/rewrite/topics.js');
    const termShare = (word: string) => ({ valgrind: 0.4, tools: 0.2, unpublish: 0.001 })[word.toLowerCase()] ?? 0.001;
    const topics = [
      { term: 'tools', weight: 1, lastTurn: 4, source: 'question' as const },
      { term: 'Valgrind', weight: 1, lastTurn: 4, source: 'question' as const },
      { term: 'unpublish', weight: 0.6, lastTurn: 3, source: 'question' as const },
    ];
    expect(rankTopicsForDisplay(topics, termShare)[0]!.term).toBe('Valgrind');
  });
});

describe('a pronoun and the phrases of its own question', () => {
  it('an object pronoun may point at a phrase of the question, but not at the subject of its own verb', () => {
    // "it" is the key, not the jobs that use it: the strict gate leaves the question alone.
    expect(findReferences('Will rotating the key break my running jobs that use it?')).toEqual([]);
    expect(findReferences('how do I tell Valgrind to use it?').map((r) => r.text)).toEqual(['it']);
  });
});

describe('the subject of a question', () => {
  it('a name without an article ends at its verb; a misspelt sentence is not a fragment', () => {
    expect(questionFocus('Does IBM offer document databases?').candidate?.phrase).toBe('IBM');
    expect(questionFocus('Does Red Hat OpenShift offer support?').candidate?.phrase).toBe('Red Hat OpenShift');
    expect(questionFocus('does Node.js support ES modules?').candidate).toMatchObject({ phrase: 'Node.js', number: 'singular' });
    expect(questionFocus('does the API key expire?').candidate?.phrase).toBe('API key');
    expect(questionFocus('Whatar are intents?').candidate).toBeUndefined();
  });
});

describe('referents in a small index about one thing', () => {
  it('"API key" and "Massif" are referents even where their words are in most chunks; a single common word is not', () => {
    const rewriter = new OfflineRewriter();
    const everywhere = () => 0.6;
    const history = [{ question: 'How do I create an API key?', standaloneQuery: 'How do I create an API key?', answer: '' }];
    expect(rewriter.rewriteSync({ question: 'does it expire?', history, topics: [], policy: 'auto', termShare: everywhere }).standaloneQuery).toBe('does the API key expire?');
    const named = [{ question: 'How do I profile heap usage with Massif?', standaloneQuery: 'How do I profile heap usage with Massif?', answer: '' }];
    expect(rewriter.rewriteSync({ question: 'how do I read its output?', history: named, topics: [], policy: 'auto', termShare: everywhere }).standaloneQuery).toBe(
      "how do I read Massif's output?",
    );
    const generic = [{ question: 'How do I pin a version?', standaloneQuery: 'How do I pin a version?', answer: '' }];
    expect(rewriter.rewriteSync({ question: 'does it expire?', history: generic, topics: [], policy: 'auto', termShare: everywhere }).standaloneQuery).not.toMatch(/the version expire/);
  });

  it('"do that" is not replaced by an action whose own "it" was never resolved', () => {
    const rewriter = new OfflineRewriter();
    const history = [
      { question: 'How do I create an API key?', standaloneQuery: 'How do I create an API key?', answer: '' },
      { question: 'how do I rotate it?', standaloneQuery: 'how do I rotate it? (create an API key)', answer: '' },
    ];
    const query = rewriter.rewriteSync({ question: 'How often should I do that?', history, topics: [], policy: 'auto' }).standaloneQuery;
    expect(query).not.toMatch(/rotate it|create an API key\?$/);
    expect(query.startsWith('How often should I do that? (')).toBe(true);
  });
});

describe('a long paste', () => {
  it('a pronoun reads its own question only a few sentences back, so many pronouns cost linear time', () => {
    // The noun phrase 500 characters back is out of reach: the pronoun points out of the question.
    const far = `my credit card${' and then'.repeat(50)} does it keep failing?`;
    expect(findReferences(far).map((reference) => reference.text)).toEqual(['it']);
    // Near, it is the pronoun's own antecedent.
    expect(findReferences('my credit card and then does it keep failing?')).toEqual([]);
    // The window does not start inside a quoted span: quotes are paired over the whole question.
    expect(findReferences(`The log says "${'x '.repeat(220)}" and my credit card "ok" does it keep failing?`)).toEqual([]);
    // A word that starts right at the window's start is read whole.
    const edge = `my card ${'so '.repeat(130)}does it keep failing?`;
    expect(edge.indexOf(' it ') + 1 - edge.indexOf('card')).toBe(400);
    expect(findReferences(edge)).toEqual([]);
  });
});

describe("a question's own words", () => {
  it('cutting a reference keeps a word that starts with a dot apart from the one before it', () => {
    expect(ownWords('tell me more about the second one?')).toBe('tell me more about?');
    expect(ownWords('(what about the second one ?)')).toBe('(what about?)');
    // "instead" is cut; ".ts" stays a word of its own, not "original.ts".
    expect(ownWords('Can Node show the positions in the original .ts files instead?')).toBe('Can Node show the positions in the original .ts files?');
  });
});
