import { describe, expect, it } from '@jest/globals';
import { InvalidArgumentError } from '../../lib/core/index.js';
import { perQueueList, queueListLiteral } from '../../lib/store/postgres/queries/queue-list.sql.js';
import { dataSource, useAdapterDataSource } from '../support/postgres-adapter.js';

useAdapterDataSource();

describe('the queue list written into a PostgreSQL claim', () => {
  const long = `q${'x'.repeat(63)}`;

  it('quotes every name as an array element and the whole as a SQL string, sorted, each name once', () => {
    expect(queueListLiteral(['NULL', 'a.b:c-d', long, 'NULL'])).toBe(`'{"NULL","a.b:c-d","${long}"}'::text[]`);
    expect(queueListLiteral(['b', 'a', 'b'])).toBe(queueListLiteral(['a', 'b']));
  });

  it('reads back in PostgreSQL as exactly those names, NULL as text and not a null', async () => {
    const names = ['NULL', 'null', 'a.b:c-d', '0', long, 'NULL'];
    const [row] = await dataSource.query(`SELECT a, array_position(a, NULL) AS nulls, cardinality(a) AS n FROM (SELECT ${queueListLiteral(names)} AS a) s`);
    expect(row).toEqual({ a: ['0', 'NULL', 'a.b:c-d', 'null', long], nulls: null, n: 5 });
  });

  it.each([['a"b'], ["o'brien"], ['a,b'], ['{a}'], ['a\\b'], ['a b'], [''], [`q${'x'.repeat(64)}`], [null]])(
    'refuses %j with a typed error before any text is built',
    (name) => {
      expect(() => queueListLiteral(['default', name as string])).toThrow(InvalidArgumentError);
      expect(() => queueListLiteral(['default', name as string])).toThrow(/^queues\[1\] must be 1 to 64 characters of letters, digits and "_ \. : -", starting with a letter or digit, got .*\.$/);
    },
  );

  it('builds once per list, shares the text between orders of one list, and keeps the 32 lists seen last', () => {
    const built: string[] = [];
    const statementFor = perQueueList((listed) => {
      built.push(listed);
      return { text: `SELECT ${listed}` };
    });
    const first = statementFor(['a', 'b']);
    expect(statementFor(['a', 'b'])).toBe(first);
    expect(statementFor(['b', 'a', 'a']).text).toBe(first.text);
    expect(built).toHaveLength(2);
    // A name that is not a queue name is refused, never built.
    expect(() => statementFor(['a,b'])).toThrow(InvalidArgumentError);
    for (let k = 0; k < 31; k++) statementFor([`q${k}`]);
    expect(built).toHaveLength(33);
    // 33 lists seen: the oldest, ['a', 'b'], was let go and is built again; the others are kept.
    statementFor(['b', 'a', 'a']);
    expect(built).toHaveLength(33);
    statementFor(['a', 'b']);
    expect(built).toHaveLength(34);
  });

  it('knows an array it saw again, and builds anew for one changed in place since', () => {
    const built: string[] = [];
    const statementFor = perQueueList((listed) => {
      built.push(listed);
      return { text: `SELECT ${listed}` };
    });
    const queues = ['a', 'b'];
    const first = statementFor(queues);
    expect(statementFor(queues)).toBe(first);
    queues[1] = 'c';
    expect(statementFor(queues).text).toBe(`SELECT ${queueListLiteral(['a', 'c'])}`);
    queues[1] = 'not a queue';
    expect(() => statementFor(queues)).toThrow(InvalidArgumentError);
    queues.pop();
    expect(statementFor(queues).text).toBe(`SELECT ${queueListLiteral(['a'])}`);
    expect(built).toHaveLength(3);
  });
});
