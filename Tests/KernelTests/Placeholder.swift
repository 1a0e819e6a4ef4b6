import Testing
import CKernels

@Test("CPU feature probe answers") func cpuProbe() { #expect(ra_cpu_features() >= 0) }
