"""Which kernels of two cubins have byte-identical code (.text), a stand-in for comparing
`cuobjdump -sass` where the machine has no cuobjdump (issue 42: the d64/d128/d256 kernels
before and after head dims 96/192 joined the Hopper template). Build each with
  nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -cubin -Xptxas -v K.cu -o K.cubin
then: python3 benchmarks/cubin_text_diff.py OLD.cubin NEW.cubin
(.nv.info sections differ whenever kernels are added: they hold symbol indices.)"""
import struct,sys,hashlib
def sections(path):
    b=open(path,'rb').read()
    shoff=struct.unpack_from('<Q',b,0x28)[0]; shentsize,shnum,shstrndx=struct.unpack_from('<HHH',b,0x3A)
    secs=[]
    for i in range(shnum):
        name,typ,flags,addr,off,size=struct.unpack_from('<IIQQQQ',b,shoff+i*shentsize)
        secs.append((name,off,size,typ))
    stro=secs[shstrndx][1]
    out={}
    for name,off,size,typ in secs:
        n=b[stro+name:b.index(b'\0',stro+name)].decode()
        out[n]=b[off:off+size] if typ!=8 else b''
    return out
a=sections(sys.argv[1]); c=sections(sys.argv[2])
for n in sorted(set(a)|set(c)):
    if not n.startswith(('.text.','.nv.info.','.nv.shared.','.nv.constant0.')): continue
    x=a.get(n); y=c.get(n)
    st='only-new' if x is None else 'only-old' if y is None else ('SAME' if x==y else f'DIFF ({len(x)} vs {len(y)} bytes)')
    print(f'{st:22s} {n}')
