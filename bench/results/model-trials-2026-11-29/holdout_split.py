import json,sys,math
src=sys.argv[1]; out=sys.argv[2]
lines=open(src).read().splitlines()
head=lines[0]
tr=[head]; te=[head]
for l in lines[1:]:
    j=json.loads(l)
    if j['collective'] in ('pingpong','neighbor_allgather'):
        tr.append(l); continue
    # grid size: the call's nominal size (power of two); train: log2(size/1K) even
    b=j['bytes']; k=round(math.log2(b/1024))
    (tr if k%2==0 else te).append(l)
open(out+'-train.jsonl','w').write('\n'.join(tr)+'\n')
open(out+'-test.jsonl','w').write('\n'.join(te)+'\n')
