#!/usr/bin/env python3
"""Files and non-test lines per kind of study (docs/ARCHITECTURE.md, "The one driver").

A kind's files are its modules under crates/experiments/src and crates/report/src and its
row types in crates/method/src/rows; a line is non-test until a file's `#[cfg(test)]`, and
*tests.rs files, snapshots and tests/ do not count. Usage: scripts/kind-size.py [REPO]
"""
import os,sys,re
root=sys.argv[1] if len(sys.argv)>1 else '.'
def nontest(path):
    n=0
    for line in open(path):
        if line.strip().startswith('#[cfg(test)]'): break
        n+=1
    return n
def files_under(d):
    out=[]
    for dp,dn,fn in os.walk(d):
        if 'snapshots' in dp or '/tests' in dp: continue
        for f in fn:
            if f.endswith('.rs') and not f.endswith('tests.rs') and f!='tests.rs':
                out.append(os.path.join(dp,f))
    return out
total=sum(nontest(p) for c in os.listdir(f'{root}/crates') for p in files_under(f'{root}/crates/{c}/src'))
print('non-test lines, all crates:',total)
kinds={'step-time':'step_time','train':'train','find-batch':'find_batch','steps-to-target':'steps_to_target'}
for k,m in kinds.items():
    fs=[]
    for c in ['experiments','report']:
        d=f'{root}/crates/{c}/src/{m}'
        if os.path.isdir(d): fs+=files_under(d)
        if os.path.isfile(d+'.rs'): fs.append(d+'.rs')
    rows=f'{root}/crates/method/src/rows/{m}.rs'
    if os.path.isfile(rows): fs.append(rows)
    print(f'{k:16} files {len(fs):3}  non-test lines {sum(nontest(p) for p in fs):6}')
