// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the bulk page allocator's contract, as its callers
 * (vmalloc, sunrpc, xfs, btrfs, page_pool, ...) rely on it:
 *
 * - alloc_pages_bulk_array() keeps the pages already in the caller's
 *   array in their slots, fills the empty slots in order and returns the
 *   length of the array's populated prefix;
 * - alloc_pages_bulk_list() adds pages to the caller's list, leaves what
 *   the list held, and returns the number of pages it added;
 * - every new page is prepared as the single page allocator prepares it:
 *   one reference, no private data, not marked pfmemalloc, and cleared
 *   for __GFP_ZERO.
 *
 * How many pages one call returns depends on the per-cpu lists and the
 * watermarks, so the array cases call again, as callers do, until the
 * array is full, and check the return value after every call.  A call
 * that does not fail adds at least one page (the single page allocator
 * serves it when the bulk path cannot), so BULK_NR calls always suffice.
 */

#include <kunit/test.h>
#include <linux/gfp.h>
#include <linux/highmem.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/string.h>

#define BULK_NR		16

struct bulk_array {
	struct page **pages;
	int nr;
};

static void bulk_free_array(void *data)
{
	struct bulk_array *a = data;
	int i;

	for (i = 0; i < a->nr; i++) {
		if (a->pages[i])
			__free_page(a->pages[i]);
	}
}

static void bulk_free_list(void *data)
{
	struct list_head *list = data;
	struct page *page, *next;

	list_for_each_entry_safe(page, next, list, lru) {
		list_del(&page->lru);
		__free_page(page);
	}
}

/* An array of @nr empty slots whose pages are freed when the test ends. */
static struct page **bulk_array(struct kunit *test, int nr)
{
	struct bulk_array *a;

	a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, a);
	a->pages = kunit_kcalloc(test, nr, sizeof(*a->pages), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, a->pages);
	a->nr = nr;
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, bulk_free_array, a), 0);
	return a->pages;
}

static int bulk_prefix(struct page **pages, int nr)
{
	int i = 0;

	while (i < nr && pages[i])
		i++;
	return i;
}

static void bulk_expect_prepared(struct kunit *test, struct page *page)
{
	void *addr;

	KUNIT_EXPECT_EQ(test, page_ref_count(page), 1);
	KUNIT_EXPECT_EQ(test, page_private(page), 0UL);
	KUNIT_EXPECT_FALSE(test, page_is_pfmemalloc(page));
	addr = kmap_local_page(page);
	KUNIT_EXPECT_NULL(test, memchr_inv(addr, 0, PAGE_SIZE));
	kunmap_local(addr);
}

/* Call until the array is full; every return is the populated prefix. */
static void bulk_fill(struct kunit *test, struct page **pages, int nr, gfp_t gfp)
{
	unsigned long ret = 0;
	int calls;

	for (calls = 0; calls < nr && ret < nr; calls++) {
		ret = alloc_pages_bulk_array(gfp, nr, pages);
		KUNIT_EXPECT_EQ(test, ret, (unsigned long)bulk_prefix(pages, nr));
	}
	KUNIT_ASSERT_EQ_MSG(test, ret, (unsigned long)nr,
			    "array not full after %d calls", nr);
}

/* Slots 0, 3, 4 and the last hold pages already; the others are filled. */
static void page_alloc_bulk_array_holes(struct kunit *test)
{
	static const int kept[] = { 0, 3, 4, BULK_NR - 1 };
	struct page *before[BULK_NR] = { };
	struct page **pages = bulk_array(test, BULK_NR);
	int i, j;

	for (i = 0; i < ARRAY_SIZE(kept); i++) {
		pages[kept[i]] = alloc_page(GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, pages[kept[i]]);
		before[kept[i]] = pages[kept[i]];
	}

	bulk_fill(test, pages, BULK_NR, GFP_KERNEL | __GFP_ZERO);

	for (i = 0; i < BULK_NR; i++) {
		if (before[i]) {
			KUNIT_EXPECT_PTR_EQ(test, pages[i], before[i]);
			continue;
		}
		bulk_expect_prepared(test, pages[i]);
		for (j = 0; j < i; j++)
			KUNIT_EXPECT_PTR_NE(test, pages[i], pages[j]);
	}
}

/* A full array: nothing is allocated, the whole array is the prefix. */
static void page_alloc_bulk_array_full(struct kunit *test)
{
	struct page *before[BULK_NR];
	struct page **pages = bulk_array(test, BULK_NR);
	int i;

	for (i = 0; i < BULK_NR; i++) {
		pages[i] = alloc_page(GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, pages[i]);
		before[i] = pages[i];
	}

	KUNIT_EXPECT_EQ(test, alloc_pages_bulk_array(GFP_KERNEL, BULK_NR, pages),
			(unsigned long)BULK_NR);
	for (i = 0; i < BULK_NR; i++)
		KUNIT_EXPECT_PTR_EQ(test, pages[i], before[i]);
}

/*
 * One empty slot at @hole, the others kept.  In the middle, the bulk path
 * fills it (one page wanted); as the last slot, the single page allocator
 * does (alloc_pages_bulk_noprof() takes that path for one page).
 */
static void bulk_one_hole(struct kunit *test, int hole)
{
	struct page *before[BULK_NR] = { };
	struct page **pages = bulk_array(test, BULK_NR);
	int i;

	for (i = 0; i < BULK_NR; i++) {
		if (i == hole)
			continue;
		pages[i] = alloc_page(GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, pages[i]);
		before[i] = pages[i];
	}

	bulk_fill(test, pages, BULK_NR, GFP_KERNEL | __GFP_ZERO);

	for (i = 0; i < BULK_NR; i++) {
		if (i == hole)
			bulk_expect_prepared(test, pages[i]);
		else
			KUNIT_EXPECT_PTR_EQ(test, pages[i], before[i]);
	}
}

static void page_alloc_bulk_array_middle_hole(struct kunit *test)
{
	bulk_one_hole(test, BULK_NR / 2);
}

static void page_alloc_bulk_array_last_hole(struct kunit *test)
{
	bulk_one_hole(test, BULK_NR - 1);
}

/* A list that holds a page already: it stays, the new pages are added. */
static void page_alloc_bulk_list(struct kunit *test)
{
	struct list_head *list;
	struct page *sentinel, *page;
	unsigned long ret, seen = 0;
	bool found = false;

	list = kunit_kzalloc(test, sizeof(*list), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, list);
	INIT_LIST_HEAD(list);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, bulk_free_list, list), 0);
	sentinel = alloc_page(GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, sentinel);
	list_add(&sentinel->lru, list);

	ret = alloc_pages_bulk_list(GFP_KERNEL | __GFP_ZERO, BULK_NR, list);
	KUNIT_EXPECT_GE(test, ret, 1UL);
	KUNIT_EXPECT_LE(test, ret, (unsigned long)BULK_NR);

	list_for_each_entry(page, list, lru) {
		if (page == sentinel) {
			found = true;
			continue;
		}
		seen++;
		bulk_expect_prepared(test, page);
	}
	KUNIT_EXPECT_TRUE(test, found);
	KUNIT_EXPECT_EQ(test, seen, ret);
}

static struct kunit_case page_alloc_bulk_cases[] = {
	KUNIT_CASE(page_alloc_bulk_array_holes),
	KUNIT_CASE(page_alloc_bulk_array_full),
	KUNIT_CASE(page_alloc_bulk_array_middle_hole),
	KUNIT_CASE(page_alloc_bulk_array_last_hole),
	KUNIT_CASE(page_alloc_bulk_list),
	{}
};

static struct kunit_suite page_alloc_bulk_suite = {
	.name = "page_alloc_bulk",
	.test_cases = page_alloc_bulk_cases,
};

kunit_test_suite(page_alloc_bulk_suite);

MODULE_DESCRIPTION("KUnit tests of the bulk page allocator's contract");
MODULE_LICENSE("GPL");
