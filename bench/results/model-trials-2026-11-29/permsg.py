"""Trial (2026-11-29): would pricing each message by its own size fit the dense
collectives better than pricing a call by its call size?

For each run of a cost-model campaign directory (NET-pP-raw.jsonl: the tuning
sweep; NET-pP-validate.jsonl: the sizes in between, another launch), this fits
two models on the tuning points (dense collectives, native left out), weighted
least squares with weights 1/t^2, parameters >= 0, one outlier pass
(max(3 MAD, 50 %)), as sparcoll-tune does:
  call  alpha and beta per band of call sizes (the library's model today);
  msg   alpha and beta per band of *message* sizes: each step of an algorithm
        priced by the band its own message falls in (ring n/P; Rabenseifner
        n/2, n/4, ..; recdbl n; binomial n; scatter n/2, n/4, .. then n/P);
both with one gamma and one beta_shared. Band cuts (0, 1 or 2, at powers of
two from 1 KiB to 64 MiB) are chosen by leave-one-size-out error, a cut kept
only when 10 % better. It prints, per run, today's numbers from the campaign's
-check.jsonl ("now") and each model's on the validation points: the worst
algorithm's median |error|, the median over all dense points, and at how many
allreduce sizes auto (the fastest prediction among ring, rabenseifner, recdbl)
is within 10 % of the best measured.

    python permsg.py bench/results/model-2026-11-25-turns
"""
import json, math, sys, itertools, glob, os
import numpy as np

def pow2below(P):
    p=1
    while p*2<=P: p*=2
    return p

def steps(coll, algo, P, n):
    """list of (count, msgbytes), gamma bytes, shared bytes"""
    p2=pow2below(P); f=1 if P!=p2 else 0; lg=int(round(math.log2(p2))); e=P-p2
    S=[]; g=0.0
    if coll=='broadcast':
        L=math.ceil(math.log2(P))
        if algo=='binomial':
            S=[(L,n)]; sh=(P-1)*n
        else:
            sz=n
            for i in range(L):
                sz/=2; S.append((1,sz))
            S.append((P-1,n/P)); sh=(P-1)*n*1.5
        return S,0.0,sh
    if algo=='ring':
        k = 2*(P-1) if coll=='allreduce' else P-1
        S=[(k,n/P)]
        g=(P-1)/P*n if coll!='allgather' else 0
        sh=(2 if coll=='allreduce' else 1)*(P-1)*n
        return S,g,sh
    if coll=='allreduce' and algo=='recdbl':
        S=[(lg+2*f,n)]; g=(lg+f)*n; sh=p2*lg*n+2*e*n
        return S,g,sh
    # rabenseifner / halving / doubling
    rs = coll!='allgather'; ag = coll!='reduce_scatter'
    half=[(1,n/2**(i+1)) for i in range(lg)]
    if rs: S+=half
    if ag: S+=half
    if coll=='allreduce':
        S+=[(2*f,n)] if f else []
        g=((p2-1)/p2+f)*n; sh=2*(p2-1)*n+2*e*n
    else:
        S+=[(f,2*n)] if f else []
        g=((p2-1)/p2+f)*n if rs else 0
        sh=(p2-1)*n+e*n+e*n/P
    return S,g,sh

def load(path):
    pts=[]
    for i,l in enumerate(open(path)):
        j=json.loads(l)
        if 'source' in j: src=j['source']; continue
        pts.append(j)
    return src,pts

DENSE={'allreduce','reduce_scatter','allgather','broadcast'}

def design(pts,P,cuts,kind):
    # columns: per band alpha, beta ; gamma ; beta_shared
    nb=len(cuts)+1
    rows=[]
    for p in pts:
        S,g,sh=steps(p['collective'],p['algorithm'],P,p['bytes'])
        r=np.zeros(2*nb+2)
        if kind=='msg':
            for c,m in S:
                if c==0: continue
                b=sum(1 for x in cuts if m>x)
                r[2*b]+=c; r[2*b+1]+=c*m
        else: # call bands
            b=sum(1 for x in cuts if p['bytes']>x)
            for c,m in S:
                r[2*b]+=c; r[2*b+1]+=c*m
        r[2*nb]=g; r[2*nb+1]=sh
        rows.append(r)
    return np.array(rows)

def nnls(A,b):
    from scipy.optimize import nnls as _n
    norms=np.linalg.norm(A,axis=0); norms[norms==0]=1
    x,_=_n(A/norms,b)
    return x/norms

def fit(pts,P,cuts,kind):
    A=design(pts,P,cuts,kind); t=np.array([p['seconds'] for p in pts])
    w=1/t
    x=nnls(A*w[:,None],t*w)
    # outlier pass
    res=(A@x-t)/t; med=np.median(res); mad=np.median(abs(res-med)); cut=max(3*mad,0.5)
    keep=abs(res)<=cut
    if keep.sum()<len(t) and keep.sum()>A.shape[1]:
        x=nnls(A[keep]*w[keep,None],t[keep]*w[keep])
    return x

def cv(pts,P,cuts,kind):
    sizes=sorted(set(p['bytes'] for p in pts))
    errs=[]
    for s in sizes:
        tr=[p for p in pts if p['bytes']!=s]; te=[p for p in pts if p['bytes']==s]
        x=fit(tr,P,cuts,kind)
        A=design(te,P,cuts,kind)
        for a,p in zip(A,te): errs.append(abs(a@x/p['seconds']-1))
    return np.median(errs)

CANDS=[2**k for k in range(10,27)]
def choose(pts,P,kind):
    best=((),cv(pts,P,(),kind))
    for nc in (1,2):
        bestc=None
        for c in itertools.combinations(CANDS,nc):
            # need at least a point in each band? skip check
            try: e=cv(pts,P,c,kind)
            except Exception: continue
            if bestc is None or e<bestc[1]: bestc=(c,e)
        if bestc and bestc[1]<0.9*best[1]: best=bestc
    return best[0]

def evaluate(vpts,P,x,cuts,kind):
    A=design(vpts,P,cuts,kind)
    pred=A@x
    per={}
    for p,pr in zip(vpts,pred):
        per.setdefault((p['collective'],p['algorithm']),[]).append(abs(pr/p['seconds']-1))
        p['_pred']=pr
    return per

def regret(vpts,coll='allreduce'):
    by={}
    for p in vpts:
        if p['collective']!=coll: continue
        by.setdefault(p['bytes'],[]).append(p)
    out=[]
    for b,ps in sorted(by.items()):
        cand=[p for p in ps if p['algorithm']!='native']
        pick=min(cand,key=lambda p:p['_pred'])
        best=min(ps,key=lambda p:p['seconds'])
        out.append(pick['seconds']/best['seconds']-1)
    return out

def main(d):
    print(f"{'run':12} {'kind':5} {'cuts':28} {'algo med err (worst)':28} {'dense med':9} {'ar regret<=10%':14}")
    for raw in sorted(glob.glob(d+'/*-raw.jsonl')):
        base=raw[:-len('-raw.jsonl')]
        src,pts=load(raw); _,vpts=load(base+'-validate.jsonl')
        P=src['ranks']
        tp=[p for p in pts if p['collective'] in DENSE and p['algorithm']!='native']
        vp=[p for p in vpts if p['collective'] in DENSE]
        vpn=[p for p in vp if p['algorithm']!='native']
        # current: from check file predicted
        _,chk=load(base+'-check.jsonl')
        cur=[p for p in chk if p['collective'] in DENSE]
        per={}
        for p in cur:
            if p['algorithm']=='native': continue
            per.setdefault((p['collective'],p['algorithm']),[]).append(abs(p['predicted']/p['seconds']-1))
        allerr=[e for v in per.values() for e in v]
        worst=max(per.items(),key=lambda kv:np.median(kv[1]))
        rg=[p['regret'] for p in cur if p['collective']=='allreduce' and p['algorithm']==p['best']] 
        # regret per size from check: each point has regret of the size
        rgs={}
        for p in cur:
            if p['collective']=='allreduce': rgs[p['bytes']]=p['regret']
        ok=sum(1 for v in rgs.values() if v is not None and v<=0.10)
        print(f"{os.path.basename(base):12} {'now':5} {'':28} {np.median(worst[1])*100:5.1f} {worst[0][0][:6]+' '+worst[0][1][:10]:21} {np.median(allerr)*100:7.1f} {ok}/{len(rgs)}")
        for kind in ('call','msg'):
            cuts=choose(tp,P,kind)
            x=fit(tp,P,cuts,kind)
            per=evaluate(vpn,P,x,cuts,kind)
            evaluate(vp,P,x,cuts,kind)
            allerr=[e for v in per.values() for e in v]
            worst=max(per.items(),key=lambda kv:np.median(kv[1]))
            rg=regret(vp)
            ok=sum(1 for r in rg if r<=0.10)
            cs=','.join(f"{c>>10}K" for c in cuts)
            print(f"{'':12} {kind:5} {cs:28} {np.median(worst[1])*100:5.1f} {worst[0][0][:6]+' '+worst[0][1][:10]:21} {np.median(allerr)*100:7.1f} {ok}/{len(rg)}")

main(sys.argv[1])
