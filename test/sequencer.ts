// The order the suite's files start in (vitest.config.ts `sequence.sequencer`). vitest puts
// the files that took longest in its last run first, and, with no record (a clean clone, as
// in CI), the largest files first. The files below take two minutes or more whatever the
// machine does, mostly waiting on the processes they run, so they start first in every run:
// started last, as a clean clone's order put them, the suite waited on them alone at its end.
import { BaseSequencer, type TestSpecification } from 'vitest/node'

export const startFirst = ['test/bench/soak.test.ts', 'test/bench/quick.test.ts']

export class LongFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files)
    const rank = (file: TestSpecification) => {
      const i = startFirst.findIndex((name) => file.moduleId.endsWith(`/${name}`))
      return i === -1 ? startFirst.length : i
    }
    return sorted.map((file, i) => ({ file, i })).sort((a, b) => rank(a.file) - rank(b.file) || a.i - b.i).map(({ file }) => file)
  }
}
