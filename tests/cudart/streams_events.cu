// streams_events.cu - pinned memory (cudaMallocHost, cudaHostAlloc), two streams with
// asynchronous copies and kernels, events between them (cudaEventElapsedTime: emu's virtual
// time, more than zero for a launch, zero for none), queries, callbacks and stream waits; a
// stream's attributes (an L2 access policy window, as cuda-samples' simpleAttributes sets one; the
// priority) kept and given back; a channel format made while textures are not served.
#include "check.h"

__global__ void scale(float *x, int n, float f)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) x[i] *= f;
}

static void CUDART_CB note(void *p) { *(int *)p += 1; }

int main()
{
    const int n = 1 << 14, half = n / 2;
    float *h, *h2, *d;
    CHECK(cudaMallocHost(&h, n * sizeof(float)));
    CHECK(cudaHostAlloc(&h2, n * sizeof(float), cudaHostAllocDefault));
    CHECK(cudaMalloc(&d, n * sizeof(float)));
    for (int i = 0; i < n; i++) h[i] = (float)i;
    cudaStream_t s[2];
    for (int i = 0; i < 2; i++) CHECK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
    cudaEvent_t start, mid, stop, other;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&mid));
    CHECK(cudaEventCreate(&stop));
    CHECK(cudaEventCreateWithFlags(&other, cudaEventDisableTiming));
    CHECK(cudaEventRecord(start, s[0]));
    CHECK(cudaEventRecord(mid, s[0]));
    for (int i = 0; i < 2; i++) {
        CHECK(cudaMemcpyAsync(d + i * half, h + i * half, half * sizeof(float), cudaMemcpyHostToDevice, s[i]));
        scale<<<16, 128, 0, s[i]>>>(d + i * half, half, i ? 3.0f : 2.0f);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpyAsync(h2 + i * half, d + i * half, half * sizeof(float), cudaMemcpyDeviceToHost, s[i]));
    }
    CHECK(cudaEventRecord(other, s[1]));
    CHECK(cudaStreamWaitEvent(s[0], other, 0));
    CHECK(cudaEventRecord(stop, s[0]));
    int calls = 0;
    CHECK(cudaLaunchHostFunc(s[0], note, &calls));
    CHECK(cudaEventSynchronize(stop));
    CHECK(cudaStreamSynchronize(s[1]));
    EXPECT(cudaStreamQuery(s[0]) == cudaSuccess, "a synchronized stream is done");
    EXPECT(cudaEventQuery(stop) == cudaSuccess, "a synchronized event is done");
    EXPECT(calls == 1, "the host function ran %d times", calls);
    for (int i = 0; i < n; i++) {
        float want = (float)i * (i < half ? 2.0f : 3.0f);
        EXPECT(h2[i] == want, "h2[%d] = %g, not %g", i, h2[i], want);
    }
    float ms = -1, none = -1;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    CHECK(cudaEventElapsedTime(&none, start, mid));
    EXPECT(ms > 0 && ms < 1000, "the launches took %g ms (virtual)", ms);
    EXPECT(none == 0, "nothing ran between start and mid, yet %g ms", none);
    EXPECT(cudaEventElapsedTime(&ms, start, other) == cudaErrorInvalidResourceHandle, "an event without timing");
    EXPECT(cudaStreamDestroy((cudaStream_t)&ms) == cudaErrorInvalidResourceHandle, "not a stream");
    cudaStreamAttrValue win = {}, back = {};
    win.accessPolicyWindow.base_ptr = d;
    win.accessPolicyWindow.num_bytes = n * sizeof(float);
    win.accessPolicyWindow.hitRatio = 0.6f;
    win.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    win.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    CHECK(cudaStreamSetAttribute(s[1], cudaStreamAttributeAccessPolicyWindow, &win));
    CHECK(cudaStreamGetAttribute(s[1], cudaStreamAttributeAccessPolicyWindow, &back));
    EXPECT(back.accessPolicyWindow.base_ptr == d && back.accessPolicyWindow.hitRatio == 0.6f &&
               back.accessPolicyWindow.hitProp == cudaAccessPropertyPersisting, "the window given back");
    CHECK(cudaCtxResetPersistingL2Cache());
    CHECK(cudaStreamGetAttribute(s[0], cudaStreamAttributeAccessPolicyWindow, &back));
    EXPECT(back.accessPolicyWindow.base_ptr == nullptr, "another stream's window is its own");
    cudaStreamAttrValue pr = {};
    pr.priority = -1;
    CHECK(cudaStreamSetAttribute(s[0], cudaStreamAttributePriority, &pr));
    int prio = 0;
    CHECK(cudaStreamGetPriority(s[0], &prio));
    EXPECT(prio == -1, "the priority set as an attribute, got %d", prio);
    EXPECT(cudaStreamSetAttribute(s[0], cudaLaunchAttributeCooperative, &pr) == cudaErrorInvalidValue,
           "a launch's attribute on a stream");
    cudaChannelFormatDesc fmt = cudaCreateChannelDesc<float4>();
    EXPECT(fmt.x == 32 && fmt.w == 32 && fmt.f == cudaChannelFormatKindFloat, "float4's channel format");
    cudaArray_t arr;
    EXPECT(cudaMallocArray(&arr, &fmt, 16, 16) == cudaErrorNotSupported, "arrays are not served");
    cudaGetLastError();
    for (int i = 0; i < 2; i++) CHECK(cudaStreamDestroy(s[i]));
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(mid));
    CHECK(cudaEventDestroy(stop));
    CHECK(cudaEventDestroy(other));
    EXPECT(cudaFreeHost(d) == cudaErrorInvalidValue, "cudaFreeHost of device memory");
    CHECK(cudaFreeHost(h));
    CHECK(cudaFreeHost(h2));
    CHECK(cudaFree(d));
    printf("streams_events: ok (%.4f ms of virtual time)\n", ms);
    return 0;
}
