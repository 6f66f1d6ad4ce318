// A second process on a SQLite file that takes SQLite's write lock when told to and keeps it until
// told otherwise, so a test can put a real neighbour's contention at the exact moment it wants.
// Raw better-sqlite3, no scheduler. One command per line on stdin, one answer per line on stdout:
//   lock     BEGIN IMMEDIATE and one write, left open         -> locked
//   release  COMMIT that transaction                          -> released
//   write    one committed write; while the file is locked it says so once (busy), waits
//            without blocking and tries again                 -> [busy] wrote
//   exit     close the file and end
// It prints "ready" first, once its table exists.
import Database from 'better-sqlite3';
import { createInterface } from 'node:readline';

const [database] = process.argv.slice(2);
const db = new Database(database, { timeout: 0 });
db.exec('CREATE TABLE IF NOT EXISTS neighbour_writes (at INTEGER NOT NULL)');
const insert = db.prepare('INSERT INTO neighbour_writes (at) VALUES (?)');
const say = (line) => process.stdout.write(`${line}\n`);

async function writeOnce() {
  let told = false;
  for (;;) {
    try {
      insert.run(Date.now());
      return say('wrote');
    } catch (error) {
      if (error.code !== 'SQLITE_BUSY') throw error;
      if (!told) say('busy');
      told = true;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  }
}

const lines = createInterface({ input: process.stdin });
say('ready');
for await (const command of lines) {
  if (command === 'lock') {
    db.exec('BEGIN IMMEDIATE');
    insert.run(Date.now());
    say('locked');
  } else if (command === 'release') {
    // Before the store switches a fresh file to WAL, the file is in rollback-journal mode, where a
    // commit needs every reader gone: the store's retry can hold a shared lock for an instant.
    // A real neighbour's busy timeout waits that out; this one retries without blocking.
    for (;;) {
      try {
        db.exec('COMMIT');
        break;
      } catch (error) {
        if (error.code !== 'SQLITE_BUSY') throw error;
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    }
    say('released');
  } else if (command === 'write') {
    await writeOnce();
  } else if (command === 'exit') {
    break;
  }
}
db.close();
