#!/usr/bin/env python3
"""The SigLIP encoder + idefics3 projector of a SmolVLM mmproj in float64 (numpy), for one 512x512 tile, to tell
which of two implementations is closer to the exact answer.

    exact_reference.py MMPROJ.gguf IMAGE.ppm VARIANT OURS.bin MTMD.bin

IMAGE must be tile-sized (image_size x image_size), and MMPROJ a projector without clip.vision.preproc_image_size
(make_smolvlm.py --legacy): mtmd's older tiling then hands the encoder the image itself (one slice and the overview,
no resampling). OURS.bin is `vlm-bench --dump` on the same pixels as an 8-bit PNG, MTMD.bin the .bin of
mtmd_reference.py. VARIANT: f64 (exact), gelu16 (GELU through an F16 table as ggml's), v16 (V rounded to F16),
all16 (both). Prints the largest and mean difference of each tile relative to the largest / mean |value|.
"""
import sys, numpy as np
from gguf import GGUFReader
mm = sys.argv[1]; ppm = sys.argv[2]
r = GGUFReader(mm)
T = {t.name: np.array(t.data, dtype=np.float64) for t in r.tensors}
def kv(name):
    f = r.fields[name]; return f.parts[f.data[0]][0]
e=int(kv("clip.vision.embedding_length")); p=int(kv("clip.vision.patch_size")); S=int(kv("clip.vision.image_size"))
H=int(kv("clip.vision.attention.head_count")); s=int(kv("clip.vision.projector.scale_factor")); eps=float(kv("clip.vision.attention.layer_norm_epsilon"))
L=int(kv("clip.vision.block_count"))
raw=open(ppm,'rb').read()
parts=raw.split(b'\n',3); w,h=map(int,parts[1].split()); img=np.frombuffer(parts[3],np.uint8)[:w*h*3].reshape(h,w,3)
assert (w,h)==(S,S)
variant = sys.argv[3] if len(sys.argv)>3 else "f64"
def f16(x): return x.astype(np.float16).astype(np.float64)
x32 = (img.astype(np.float32)/np.float32(255) - np.float32(0.5))/np.float32(0.5)
pix = x32.astype(np.float64).transpose(2,0,1)  # c,h,w
side=S//p; n=side*side
patches = pix.reshape(3,side,p,side,p).transpose(1,3,0,2,4).reshape(n,3*p*p)
K = T["v.patch_embd.weight"].reshape(e,3*p*p)
x = patches@K.T + T["v.patch_embd.bias"] + T["v.position_embd.weight"].reshape(n,e)
def ln(x,wt,b):
    m=x.mean(1,keepdims=True); v=((x-m)**2).mean(1,keepdims=True); return (x-m)/np.sqrt(v+eps)*wt+b
def gelu(x):
    g = 0.5*x*(1+np.tanh(np.sqrt(2/np.pi)*x*(1+0.044715*x*x)))
    if variant in ("gelu16","all16"):
        # ggml: x rounded to F16, the table holds gelu(f16) rounded to F16
        xf=f16(x); g=0.5*xf*(1+np.tanh(np.sqrt(2/np.pi)*xf*(1+0.044715*xf*xf))); g=f16(g)
        g=np.where(x<=-10,0,np.where(x>=10,x,g))
    return g
hd=e//H
for l in range(L):
    b=f"v.blk.{l}."
    xn=ln(x,T[b+"ln1.weight"],T[b+"ln1.bias"])
    q=xn@T[b+"attn_q.weight"].T+T[b+"attn_q.bias"]; k=xn@T[b+"attn_k.weight"].T+T[b+"attn_k.bias"]; v=xn@T[b+"attn_v.weight"].T+T[b+"attn_v.bias"]
    out=np.zeros((n,e))
    for hh in range(H):
        sl=slice(hh*hd,(hh+1)*hd)
        sc=(q[:,sl]@k[:,sl].T)/np.sqrt(hd); sc-=sc.max(1,keepdims=True); pr=np.exp(sc); pr/=pr.sum(1,keepdims=True)
        vv = f16(v[:,sl]) if variant in ("v16","all16") else v[:,sl]
        out[:,sl]=pr@vv
    x = x + out@T[b+"attn_out.weight"].T+T[b+"attn_out.bias"]
    xn=ln(x,T[b+"ln2.weight"],T[b+"ln2.bias"])
    ff=gelu(xn@T[b+"ffn_up.weight"].T+T[b+"ffn_up.bias"])
    x = x + ff@T[b+"ffn_down.weight"].T+T[b+"ffn_down.bias"]
x=ln(x,T["v.post_ln.weight"],T["v.post_ln.bias"])
o=side//s
tok=np.zeros((o*o,e*s*s))
for gy in range(o):
    for gx in range(o):
        for dy in range(s):
            for dx in range(s):
                tok[gy*o+gx, e*(dx+s*dy):e*(dx+s*dy)+e] = x[(s*gy+dy)*side+(s*gx+dx)]
P=T["mm.model.fc.weight"]
emb=tok@P.T
ours=np.fromfile(sys.argv[4],np.float32).reshape(-1,emb.shape[0],emb.shape[1])
ref=np.fromfile(sys.argv[5],np.float32).reshape(-1,emb.shape[0],emb.shape[1])
def cmp(a,b,name):
    d=np.abs(a-b); sc=np.abs(b).max(); print(f"{name:14s} max rel {d.max()/sc:.3e}  mean rel {d.mean()/np.abs(b).mean():.3e}")
print("variant", variant)
for t in range(ours.shape[0]):
    cmp(ours[t],emb,f"ours tile{t}"); cmp(ref[t],emb,f"mtmd tile{t}"); cmp(ours[t],ref[t],f"ours-mtmd t{t}")
